import { defineFormat, type ScanHead, type Sniffed } from '../format-module.js';
import { parseSarif } from './parse.js';

/**
 * A SARIF log: a `$schema` naming SARIF, or a `runs` array beside a `version` or whose runs
 * have a `tool` or `results`. Only `likely` even with its `$schema`: a document that declares
 * itself CycloneDX (`bomFormat`) is read as CycloneDX.
 */
function sniffSarif(head: ScanHead): Sniffed {
  const json = head.json;
  if (!json) return null;
  if (/sarif/i.test(json.scalars.get('$schema') ?? '')) return 'likely';
  const runs =
    json.keys.has('runs') &&
    (json.keys.has('version') || json.runItemKeys.has('tool') || json.runItemKeys.has('results'));
  return runs ? 'likely' : null;
}

/** SARIF 2.1.0 logs. */
export const sarif = defineFormat({
  format: 'sarif',
  label: 'SARIF',
  listedAs: 'SARIF 2.1.0',
  aFile: 'a SARIF log',
  sniff: sniffSarif,
  parse: parseSarif,
});
