/**
 * Generates large scan files for the parser bench by repeating the hosts of real fixtures with
 * new addresses. Output goes to bench/.data/ (gitignored).
 *
 *   npx tsx bench/parsers/generate.ts                 # 100 MB each of nessus, qualys, openvas
 *   npx tsx bench/parsers/generate.ts --size 1GB      # 1 GB each
 *   npx tsx bench/parsers/generate.ts --size 500MB --format nessus
 */
import { createWriteStream, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const DATA_DIR = fileURLToPath(new URL('../.data/', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../../shared/fixtures/scans/', import.meta.url));

/** A fixture split into the part before the repeated records, the records, and the rest. */
interface Template {
  source: string;
  /** Regex matching one repeatable record (a host block or a result). */
  record: RegExp;
  /** Rewrites one record for copy `n` so it describes a new host. */
  rewrite: (record: string, n: number) => string;
}

const ip = (n: number): string => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

export const TEMPLATES: Readonly<Record<'nessus' | 'qualys' | 'openvas', Template>> = {
  nessus: {
    source: 'nessus/nessus_v_unknown.xml',
    record: /<ReportHost [\s\S]*?<\/ReportHost>\s*/g,
    rewrite: (r, n) =>
      r
        .replace(/<ReportHost name="[^"]*"/, `<ReportHost name="host${n}.bench.example"`)
        .replace(/<tag name="host-ip">[^<]*<\/tag>/, `<tag name="host-ip">${ip(n)}</tag>`)
        .replace(/<tag name="host-fqdn">[^<]*<\/tag>/, `<tag name="host-fqdn">host${n}.bench.example</tag>`),
  },
  // The asset data report: hosts first, GLOSSARY after, so the bench exercises the spill join.
  qualys: {
    source: 'qualys/Qualys_Sample_Report.xml',
    record: /<HOST>[\s\S]*?<\/HOST>\s*/g,
    rewrite: (r, n) =>
      r
        .replace(/<IP>[^<]*<\/IP>/, `<IP>${ip(n)}</IP>`)
        .replace(/<DNS><!\[CDATA\[[^\]]*\]\]><\/DNS>/, `<DNS><![CDATA[host${n}.bench.example]]></DNS>`),
  },
  openvas: {
    source: 'openvas/many_vuln.xml',
    record: /<result id="[\s\S]*?<\/result>\s*/g,
    rewrite: (r, n) => r.replace(/<host>[^<]*/, `<host>${ip(n >> 3)}`),
  },
};

/** Parses "100MB", "1GB", "500mb" into bytes. */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(KB|MB|GB)?$/i.exec(text.trim());
  if (!m) throw new Error(`bad size: ${text}`);
  const unit = (m[2] ?? 'MB').toUpperCase();
  return Math.round(Number(m[1]) * (unit === 'GB' ? 1024 ** 3 : unit === 'MB' ? 1024 ** 2 : 1024));
}

/** Writes `<format>-<label>.xml` of at least `bytes` unless it already exists at that size; returns its path. */
export async function generate(
  format: keyof typeof TEMPLATES,
  bytes: number,
  label: string,
): Promise<string> {
  mkdirSync(DATA_DIR, { recursive: true });
  const out = `${DATA_DIR}${format}-${label}.xml`;
  if (existsSync(out) && statSync(out).size >= bytes) return out;
  const t = TEMPLATES[format];
  const text = readFileSync(`${FIXTURES}${t.source}`, 'utf8');
  const records = [...text.matchAll(t.record)];
  if (records.length === 0) throw new Error(`no records in ${t.source}`);
  const head = text.slice(0, records[0]!.index);
  const last = records[records.length - 1]!;
  const tail = text.slice(last.index + last[0].length);
  const ws = createWriteStream(out);
  let written = 0;
  const write = async (s: string) => {
    written += Buffer.byteLength(s);
    if (!ws.write(s)) await once(ws, 'drain');
  };
  await write(head);
  for (let n = 0; written + tail.length < bytes; n++) {
    await write(t.rewrite(records[n % records.length]![0], n));
  }
  await write(tail);
  ws.end();
  await once(ws, 'finish');
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: { size: { type: 'string', default: '100MB' }, format: { type: 'string', default: 'all' } },
  });
  const formats =
    values.format === 'all'
      ? (Object.keys(TEMPLATES) as (keyof typeof TEMPLATES)[])
      : [values.format as keyof typeof TEMPLATES];
  const bytes = parseSize(values.size!);
  for (const f of formats) {
    const path = await generate(f, bytes, values.size!.toLowerCase());
    console.log(`${f}: ${path} (${(statSync(path).size / 1024 ** 2).toFixed(1)} MiB)`);
  }
}
