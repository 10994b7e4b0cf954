/**
 * Generates large scan files for the parser and ingest benches by repeating the records of real
 * fixtures with new hosts, files and packages (`formats.ts`). Output goes to bench/.data/
 * (gitignored).
 *
 *   npx tsx bench/parsers/generate.ts                        # 100 MB of every format
 *   npx tsx bench/parsers/generate.ts --size 1GB             # 1 GB each
 *   npx tsx bench/parsers/generate.ts --size 500MB --format nessus
 *   npx tsx bench/parsers/generate.ts --format sarif,cyclonedx-json,cyclonedx-xml,cli
 */
import { createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BENCH_FORMATS, FORMATS, type BenchFormat } from './formats.js';
import type { Layout } from './layouts.js';

export { BENCH_FORMATS, FORMATS, type BenchFormat } from './formats.js';

export const DATA_DIR = fileURLToPath(new URL('../.data/', import.meta.url));

/** Parses "100MB", "1GB", "500mb" into bytes. */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(KB|MB|GB)?$/i.exec(text.trim());
  if (!m) throw new Error(`bad size: ${text}`);
  const unit = (m[2] ?? 'MB').toUpperCase();
  return Math.round(Number(m[1]) * (unit === 'GB' ? 1024 ** 3 : unit === 'MB' ? 1024 ** 2 : 1024));
}

/** `all`, one format or a comma-separated list, checked. */
export function parseFormats(text: string): BenchFormat[] {
  if (text === 'all') return [...BENCH_FORMATS];
  return text.split(',').map((f) => {
    if (!(BENCH_FORMATS as readonly string[]).includes(f))
      throw new Error(`unknown format ${f}; one of ${BENCH_FORMATS.join(', ')}`);
    return f as BenchFormat;
  });
}

/** The path {@link generate} writes for a format and size label. */
export function dataFile(format: BenchFormat, label: string): string {
  return `${DATA_DIR}${format}-${label}.${FORMATS[format].ext}`;
}

/**
 * Steps needed for the file to reach `bytes`. With one section the record that crosses the size
 * is the last; with several (CycloneDX: components, then vulnerabilities) every section gets the
 * same number of steps, so the count is found before writing.
 */
function countSteps(layout: Layout, bytes: number): number {
  let total = layout.parts.reduce((s, p) => s + Buffer.byteLength(p), 0);
  let n = 0;
  for (; total < bytes; n++) {
    for (const s of layout.sections) total += Buffer.byteLength(s.step(n)) + (n > 0 ? s.separator.length : 0);
  }
  return Math.max(1, n);
}

/** Writes `<format>-<label>.<ext>` of at least `bytes` unless it already exists at that size; returns its path. */
export async function generate(format: BenchFormat, bytes: number, label: string): Promise<string> {
  mkdirSync(DATA_DIR, { recursive: true });
  const out = dataFile(format, label);
  if (existsSync(out) && statSync(out).size >= bytes) return out;
  const layout = await FORMATS[format].layout();
  const steps = countSteps(layout, bytes);
  const ws = createWriteStream(out);
  const write = async (s: string) => {
    if (!ws.write(s)) await once(ws, 'drain');
  };
  for (const [i, section] of layout.sections.entries()) {
    await write(layout.parts[i]!);
    for (let n = 0; n < steps; n++)
      await write(n > 0 ? section.separator + section.step(n) : section.step(0));
  }
  await write(layout.parts[layout.parts.length - 1]!);
  ws.end();
  await once(ws, 'finish');
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: { size: { type: 'string', default: '100MB' }, format: { type: 'string', default: 'all' } },
  });
  const bytes = parseSize(values.size!);
  for (const f of parseFormats(values.format!)) {
    const t0 = performance.now();
    const path = await generate(f, bytes, values.size!.toLowerCase());
    const s = ((performance.now() - t0) / 1000).toFixed(1);
    console.log(`${f}: ${path} (${(statSync(path).size / 1024 ** 2).toFixed(1)} MiB, ${s} s)`);
  }
}
