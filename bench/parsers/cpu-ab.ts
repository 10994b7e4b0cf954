/**
 * Parse CPU of two checkouts of `src/parsers`, alternated in ONE process on the same file, so a
 * shared machine's load falls on both alike: the figure is the ratio of the medians, not a time.
 * Before timing, each side parses the file once and the whole output is compared (every field of
 * every finding, in order): a speed change must not change what is stored.
 *
 *   git archive <rev> src | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/node_modules
 *   npx tsx bench/parsers/cpu-ab.ts --before /tmp/before --file bench/.data/cyclonedx-json-30mb.json [--pairs 8]
 *
 * CPU is this thread's (`process.cpuUsage`, user + system): the parse runs in-thread, as in a
 * parser pool's thread.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as current from '../../src/parsers/parse-scan.js';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    file: { type: 'string' },
    pairs: { type: 'string', default: '8' },
  },
});
if (!values.before || !values.file) throw new Error('pass --before DIR and --file F');
const file = values.file;
const before = (await import(resolve(values.before, 'src/parsers/parse-scan.ts'))) as typeof current;

async function run(mod: typeof current, digest = false): Promise<{ cpu: number; n: number; digest: string }> {
  const h = createHash('sha256');
  let n = 0;
  const c0 = process.cpuUsage();
  for await (const batch of mod.parseScan(createReadStream(file, { highWaterMark: 256 * 1024 }))) {
    n += batch.length;
    if (digest) for (const f of batch) h.update(JSON.stringify(f));
  }
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1e6, n, digest: h.digest('hex') };
}

const b0 = await run(before, true);
const a0 = await run(current, true);
if (b0.n !== a0.n || b0.digest !== a0.digest) throw new Error(`outputs differ: ${b0.n} vs ${a0.n} findings`);
const load = loadavg()[0]!;
const cpu = { before: [] as number[], after: [] as number[] };
for (let i = 0; i < Number(values.pairs); i++) {
  // Alternate which side goes first, so neither always follows the other's garbage.
  const order = i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
  for (const side of order) cpu[side].push((await run(side === 'before' ? before : current)).cpu);
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
console.log(
  JSON.stringify({
    file: file.split('/').pop(),
    findings: a0.n,
    identical: true,
    'before CPU s': cpu.before.map((x) => +x.toFixed(2)),
    'after CPU s': cpu.after.map((x) => +x.toFixed(2)),
    'median before': +median(cpu.before).toFixed(3),
    'median after': +median(cpu.after).toFixed(3),
    'after ÷ before': +(median(cpu.after) / median(cpu.before)).toFixed(3),
    'load (1 min) start → end': `${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`,
  }),
);
