/**
 * CLI findings as JSON Lines for the generator (`formats.ts`). No CLI fixture exists among the
 * shared ones, so the lines are real findings re-printed in the CLI format (docs/ingestion.md#formats).
 */
import { createReadStream } from 'node:fs';
import { parseScanToArray, type Finding } from '../../src/parsers/index.js';
import { FIXTURES, eachRecord, ip, renamePurl, type Layout, type Section } from './layouts.js';

type Obj = Record<string, unknown>;

/**
 * CLI findings JSON Lines. There is no CLI fixture among the scanner samples, so the lines are the
 * findings of three real reports as a CLI tool wrapping those scanners would print them: Nessus
 * (hosts and ports), Flawfinder SARIF (file:line) and jake's CycloneDX (packages), read with the
 * service's own parsers. Copy c moves each to a new host, directory or package.
 */
export async function cliLayout(): Promise<Layout> {
  return { parts: ['', '\n'], sections: [await cliLines('\n')] };
}

/** The same findings as one CLI JSON document: `{"tool": …, "findings": [ … ]}`. */
export async function cliJsonLayout(): Promise<Layout> {
  return {
    parts: ['{"tool":{"name":"bench","version":"1"},"findings":[\n', '\n]}\n'],
    sections: [await cliLines(',\n')],
  };
}

async function cliLines(separator: string): Promise<Section> {
  const sources = ['nessus/nessus_v_unknown.xml', 'sarif/flawfinder.sarif', 'cyclonedx/jake2.json'];
  const findings: Finding[] = [];
  for (const s of sources)
    findings.push(...(await parseScanToArray(createReadStream(`${FIXTURES}${s}`))).findings);
  const hosts = [...new Set(findings.map((f) => f.asset.ip ?? f.asset.host).filter((h) => h !== null))];
  const hostIndex = new Map(hosts.map((h, i) => [h, i]));
  return eachRecord(
    findings,
    (f, _n, copy) => {
      const h = hostIndex.get(f.asset.ip ?? f.asset.host ?? '');
      return JSON.stringify(cliFinding(f, copy, h === undefined ? null : copy * hosts.length + h));
    },
    separator,
  );
}

/** A finding in the CLI format (docs/ingestion.md#formats), null fields left out as a tool would. */
function cliFinding(f: Finding, copy: number, host: number | null): Obj {
  const a = f.asset;
  const file = a.file === null ? null : `svc${copy}/${a.file}`;
  const location =
    file !== null
      ? a.line !== null
        ? `${file}:${a.line}`
        : file
      : f.port !== null
        ? { port: f.port, protocol: f.protocol }
        : undefined;
  const out: Obj = {
    title: f.title,
    severity: f.severity.toLowerCase(),
    ruleId: f.ruleId,
    cveIds: f.cveIds,
    cweIds: f.cweIds,
    cvssScore: f.cvssScore,
    cvssVector: f.cvssVector,
    description: f.description,
    solution: f.solution,
    location,
    asset:
      host === null
        ? undefined
        : { host: `host${host}.bench.example`, ip: ip(host), fqdn: `host${host}.bench.example`, os: a.os },
    component: a.component === null ? null : `${a.component}-b${copy}`,
    componentVersion: a.componentVersion,
    purl: a.purl === null ? null : renamePurl(a.purl, copy),
  };
  for (const k of Object.keys(out)) if (out[k] === null || out[k] === undefined) delete out[k];
  return out;
}
