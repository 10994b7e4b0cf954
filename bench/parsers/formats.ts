/**
 * The formats the parser and ingest benches generate, and how each is built from the shared
 * fixtures (`test/fixtures/scans`, read-only) in its real format: a valid document that the
 * producer could have written, with every repeated record describing a new host, file or package,
 * so that every finding is a new case end to end.
 */
import { readFileSync } from 'node:fs';
import type { ScanFormat } from '../../src/parsers/index.js';
import { cliJsonLayout, cliLayout } from './cli-lines.js';
import {
  FIXTURES,
  eachRecord,
  indentOf,
  ip,
  jsonLayout,
  lockstep,
  newRef,
  renamePurl,
  textLayout,
  type Layout,
} from './layouts.js';

/** Every generated format: the three XML network scanners first, then SAST, SCA and CLI. */
export const BENCH_FORMATS = [
  'nessus',
  'qualys',
  'qualys-scan',
  'qualys-detection',
  'openvas',
  'sarif',
  'cyclonedx-json',
  'cyclonedx-xml',
  'cli',
  'cli-json',
] as const;

/** One of {@link BENCH_FORMATS}. */
export type BenchFormat = (typeof BENCH_FORMATS)[number];

/** What the benches need to know about a generated format. */
export interface FormatSpec {
  ext: 'xml' | 'sarif' | 'json' | 'jsonl';
  /** The parser's format (the upload's `format=`). */
  scanFormat: ScanFormat;
  /** What the upload is sent as. */
  contentType: string;
  /**
   * The whole-document baseline: a fast-xml-parser tree, `JSON.parse` of the whole file, or
   * `JSON.parse` of each line (JSON Lines has no whole document to parse).
   */
  baseline: 'xml-dom' | 'json-parse' | 'json-lines';
  /** Record boundaries can be found without parsing from the start, so `split x2` is measured. */
  splittable: boolean;
  layout(): Promise<Layout>;
}

const fixture = (path: string): string => readFileSync(`${FIXTURES}${path}`, 'utf8');

type Obj = Record<string, unknown>;

/** A SARIF result moved to `svc<copy>/`: the same code in another repository of a monorepo. */
function relocateResult(record: unknown, _n: number, copy: number): unknown {
  const r = record as Obj;
  const locations = (r.locations as Obj[] | undefined)?.map((l) => {
    const physical = l.physicalLocation as Obj | undefined;
    const artifact = physical?.artifactLocation as Obj | undefined;
    if (!physical || typeof artifact?.uri !== 'string') return l;
    return {
      ...l,
      physicalLocation: { ...physical, artifactLocation: { ...artifact, uri: `svc${copy}/${artifact.uri}` } },
    };
  });
  return locations ? { ...r, locations } : r;
}

function renameComponent(record: unknown, copy: number): unknown {
  const c = record as Obj;
  const out: Obj = { ...c };
  if (typeof c['bom-ref'] === 'string') out['bom-ref'] = newRef(c['bom-ref'], copy);
  if (typeof c.name === 'string') out.name = `${c.name}-b${copy}`;
  if (typeof c.purl === 'string') out.purl = renamePurl(c.purl, copy);
  if (Array.isArray(c.components)) out.components = c.components.map((x) => renameComponent(x, copy));
  return out;
}

function retargetVulnerability(record: unknown, copy: number): unknown {
  const v = record as Obj;
  const out: Obj = { ...v };
  if (typeof v['bom-ref'] === 'string') out['bom-ref'] = newRef(v['bom-ref'], copy);
  if (Array.isArray(v.affects))
    out.affects = (v.affects as Obj[]).map((a) =>
      typeof a.ref === 'string' ? { ...a, ref: newRef(a.ref, copy) } : a,
    );
  return out;
}

const XML = { ext: 'xml', contentType: 'application/xml', baseline: 'xml-dom' } as const;

/** Per format: how its file is built, uploaded and baselined. */
export const FORMATS: Readonly<Record<BenchFormat, FormatSpec>> = {
  nessus: {
    ...XML,
    scanFormat: 'nessus',
    splittable: true,
    layout: async () =>
      textLayout(fixture('nessus/nessus_v_unknown.xml'), [
        {
          record: /<ReportHost [\s\S]*?<\/ReportHost>\s*/g,
          section: (records) =>
            eachRecord(records, (r, n) =>
              r
                .replace(/<ReportHost name="[^"]*"/, `<ReportHost name="host${n}.bench.example"`)
                .replace(/<tag name="host-ip">[^<]*<\/tag>/, `<tag name="host-ip">${ip(n)}</tag>`)
                .replace(
                  /<tag name="host-fqdn">[^<]*<\/tag>/,
                  `<tag name="host-fqdn">host${n}.bench.example</tag>`,
                ),
            ),
        },
      ]),
  },
  // The asset data report: hosts first, GLOSSARY after, so the bench exercises the spill join.
  qualys: {
    ...XML,
    scanFormat: 'qualys',
    splittable: true,
    layout: async () =>
      textLayout(fixture('qualys/Qualys_Sample_Report.xml'), [
        {
          record: /<HOST>[\s\S]*?<\/HOST>\s*/g,
          section: (records) =>
            eachRecord(records, (r, n) =>
              r
                .replace(/<IP>[^<]*<\/IP>/, `<IP>${ip(n)}</IP>`)
                .replace(
                  /<DNS><!\[CDATA\[[^\]]*\]\]><\/DNS>/,
                  `<DNS><![CDATA[host${n}.bench.example]]></DNS>`,
                ),
            ),
        },
      ]),
  },
  // The scan report (SCAN > IP > VULNS/INFOS/SERVICES): each copy of its two hosts gets an address.
  'qualys-scan': {
    ...XML,
    scanFormat: 'qualys',
    splittable: true,
    layout: async () =>
      textLayout(fixture('qualys/qualys_infrascan_webgui_multiple.xml'), [
        {
          record: /<IP value="[^"]*"[^>]*>[\s\S]*?<\/IP>\s*/g,
          section: (records) =>
            eachRecord(records, (r, n) =>
              r.replace(
                /^<IP value="[^"]*" name="[^"]*"/,
                `<IP value="${ip(n)}" name="host${n}.bench.example"`,
              ),
            ),
        },
      ]),
  },
  // The VM host detection list (HOST_LIST_VM_DETECTION_OUTPUT), its hosts given new addresses.
  'qualys-detection': {
    ...XML,
    scanFormat: 'qualys',
    splittable: true,
    layout: async () =>
      textLayout(fixture('../parsers/qualys-detection.xml'), [
        {
          record: /<HOST>[\s\S]*?<\/HOST>\s*/g,
          section: (records) =>
            eachRecord(records, (r, n) =>
              r
                .replace(/<ID>[^<]*<\/ID>/, `<ID>${n + 1}</ID>`)
                .replace(/<IP>[^<]*<\/IP>/, `<IP>${ip(n)}</IP>`)
                .replace(
                  /<DNS><!\[CDATA\[[^\]]*\]\]><\/DNS>/,
                  `<DNS><![CDATA[host${n}.bench.example]]></DNS>`,
                ),
            ),
        },
      ]),
  },
  openvas: {
    ...XML,
    scanFormat: 'openvas',
    splittable: true,
    layout: async () =>
      textLayout(fixture('openvas/many_vuln.xml'), [
        {
          record: /<result id="[\s\S]*?<\/result>\s*/g,
          section: (records) =>
            eachRecord(records, (r, n) => r.replace(/<host>[^<]*/, `<host>${ip(n >> 3)}`)),
        },
      ]),
  },
  // Flawfinder's SARIF 2.1.0 (rules in tool.driver, results with locations, snippets and
  // fingerprints); every copy of its 54 results sits in another directory.
  sarif: {
    ext: 'sarif',
    scanFormat: 'sarif',
    contentType: 'application/json',
    baseline: 'json-parse',
    splittable: false,
    layout: async () => {
      const text = fixture('sarif/flawfinder.sarif');
      return jsonLayout(JSON.parse(text), indentOf(text), [
        { path: ['runs', 0, 'results'], rewrite: relocateResult },
      ]);
    },
  },
  // jake's CycloneDX 1.4 JSON (67 PyPI components, 7 OSS Index vulnerabilities); copy n renames
  // every component (new bom-ref, name and purl) and points its vulnerabilities at them.
  'cyclonedx-json': {
    ext: 'json',
    scanFormat: 'cyclonedx',
    contentType: 'application/json',
    baseline: 'json-parse',
    splittable: false,
    layout: async () => {
      const text = fixture('cyclonedx/jake2.json');
      return jsonLayout(JSON.parse(text), indentOf(text), [
        { path: ['components'], lockstep: true, rewrite: (r, n) => renameComponent(r, n) },
        { path: ['vulnerabilities'], lockstep: true, rewrite: (r, n) => retargetVulnerability(r, n) },
      ]);
    },
  },
  // grype's CycloneDX 1.4 XML (log4j-core, 8 vulnerabilities), renamed per copy the same way.
  'cyclonedx-xml': {
    ...XML,
    scanFormat: 'cyclonedx',
    splittable: false,
    layout: async () =>
      textLayout(fixture('cyclonedx/log4j.xml'), [
        {
          after: '<components>',
          record: /<component [\s\S]*?<\/component>\s*/g,
          section: (records) =>
            lockstep(records, (r, n) =>
              r
                .replace(/ bom-ref="([^"]*)"/, (_, ref: string) => ` bom-ref="${newRef(ref, n)}"`)
                .replace(/<name>([^<]*)<\/name>/, `<name>$1-b${n}</name>`)
                .replace(/<purl>([^<]*)<\/purl>/, (_, purl: string) => `<purl>${renamePurl(purl, n)}</purl>`),
            ),
        },
        {
          after: '<vulnerabilities>',
          record: /<vulnerability[\s>][\s\S]*?<\/vulnerability>\s*/g,
          section: (records) =>
            lockstep(records, (r, n) =>
              r
                .replace(
                  /(<vulnerability[^>]* bom-ref=")([^"]*)/,
                  (_, open: string, ref: string) => open + newRef(ref, n),
                )
                .replace(/<ref>([^<]*)<\/ref>/g, (_, ref: string) => `<ref>${newRef(ref, n)}</ref>`),
            ),
        },
      ]),
  },
  cli: {
    ext: 'jsonl',
    scanFormat: 'cli',
    contentType: 'application/x-ndjson',
    baseline: 'json-lines',
    splittable: true,
    layout: cliLayout,
  },
  // The same findings as one CLI JSON document (`{"tool", "findings": [...]}`).
  'cli-json': {
    ext: 'json',
    scanFormat: 'cli',
    contentType: 'application/json',
    baseline: 'json-parse',
    splittable: false,
    layout: cliJsonLayout,
  },
};
