import { defineFormat, type ScanHead, type Sniffed } from '../format-module.js';
import { parseCyclonedx } from './parse.js';

/** A CycloneDX BOM declares itself: a `bom` root in CycloneDX's namespace, or `bomFormat`/`$schema` in JSON. */
function sniffCyclonedx(head: ScanHead): Sniffed {
  if (head.xmlRoot)
    return head.xmlRoot.name === 'bom' && /cyclonedx\.org/i.test(head.xmlRoot.tag) ? 'sure' : null;
  const json = head.json;
  if (!json) return null;
  const declared =
    json.scalars.get('bomFormat') === 'CycloneDX' || /cyclonedx/i.test(json.scalars.get('$schema') ?? '');
  return declared ? 'sure' : null;
}

/** CycloneDX BOMs (JSON or XML) with vulnerabilities. */
export const cyclonedx = defineFormat({
  format: 'cyclonedx',
  label: 'CycloneDX',
  listedAs: 'CycloneDX',
  aFile: 'a CycloneDX BOM',
  sniff: sniffCyclonedx,
  parse: parseCyclonedx,
});
