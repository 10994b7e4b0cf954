/**
 * What the `web` process's live heap holds: starts one `web` process with the Procfile's node
 * options (on its own bench database), sends `--requests` triages through the local engine one at
 * a time as warm-up, then has it write a V8 heap snapshot (`--heapsnapshot-signal`, which runs a
 * full GC first) and sums the snapshot's objects by kind and by constructor or type name, with the
 * largest single objects (a table loaded whole shows up there).
 *
 *   npx tsx bench/triage/web-heap.ts [--requests 500] [--compiled] [--top 25] [--keep FILE]
 *
 * `--compiled` runs `dist/src/main.js` as deployed (after `npm run build`); without it the sources
 * run under tsx, whose transformed sources and source maps are part of the heap.
 */
import { readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createBenchDatabase } from '../lib/bench-db.js';
import { procfileNodeArgs } from '../lib/procfile.js';
import { signUpOverHttp, startServerProcess } from '../../test/helpers/server-process.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
const requests = Number(opt('requests', '500'));
const top = Number(opt('top', '25'));
const compiled = args.includes('--compiled');
const keep = opt('keep', '');

const procfileArgs = procfileNodeArgs('web');

const db = await createBenchDatabase('bench_heap');
const cwd = process.cwd();
const before = new Set(readdirSync(cwd));
const server = await startServerProcess(
  'web',
  {
    DATABASE_URL: db.url,
    KEY_PEPPER: 'bench-pepper-'.padEnd(48, 'x'),
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    LOG_LEVEL: 'silent',
    PLANS_FILE: path.resolve('bench/auth/unlimited-plans.json'),
  },
  { nodeArgs: [...procfileArgs, '--heapsnapshot-signal=SIGUSR1'], compiled },
);
try {
  const { key } = await signUpOverHttp(server.url);
  const body = JSON.stringify({
    title: 'Outdated OpenSSL on an internal host',
    severity: 'MEDIUM',
    description: 'OpenSSL 1.1.1 reached end of life',
  });
  for (let i = 0; i < requests; i++) {
    const res = await fetch(`${server.url}/api/v1/triage`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body,
    });
    if (res.status !== 200) throw new Error(`triage answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  }
  server.child.kill('SIGUSR1');
  let file: string | undefined;
  for (let waited = 0; file === undefined && waited < 120_000; waited += 200) {
    await new Promise((r) => setTimeout(r, 200));
    // Written as it goes: done once the process's next line of JSON closes the document.
    file = readdirSync(cwd).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (file !== undefined && !readFileSync(file, 'utf8').trimEnd().endsWith('}')) file = undefined;
  }
  if (file === undefined) throw new Error('no heap snapshot written');
  summarise(readFileSync(file, 'utf8'));
  if (keep) renameSync(file, keep);
  else rmSync(file);
} finally {
  await server.stop();
  await db.drop();
}

/** Sums a snapshot's nodes by kind and by name, and lists the largest single nodes. */
function summarise(text: string) {
  const snap = JSON.parse(text) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [fType, fName, fSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const byType = new Map<string, number>();
  const byName = new Map<string, { n: number; bytes: number }>();
  const largest: { label: string; bytes: number }[] = [];
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + fType]!]!;
    const size = snap.nodes[i + fSize]!;
    const rawName = snap.strings[snap.nodes[i + fName]!]!;
    const name = type === 'string' || type === 'concatenated string' ? '(strings)' : rawName.slice(0, 60);
    total += size;
    byType.set(type, (byType.get(type) ?? 0) + size);
    const key = `${type}: ${name}`;
    const e = byName.get(key) ?? { n: 0, bytes: 0 };
    e.n++;
    e.bytes += size;
    byName.set(key, e);
    if (size >= 256 * 1024)
      largest.push({ label: `${type}: ${rawName.slice(0, 80).replace(/\s+/g, ' ')}`, bytes: size });
  }
  const mib = (b: number) => (b / 1024 / 1024).toFixed(2);
  console.log(
    `heap snapshot after ${requests} triages (${compiled ? 'compiled' : 'tsx'}): ${mib(total)} MiB`,
  );
  console.log('\nby kind (MiB):');
  for (const [t, b] of [...byType].sort((a, b) => b[1] - a[1])) console.log(`  ${mib(b).padStart(8)}  ${t}`);
  console.log(`\nby kind and name, the ${top} largest (MiB, count):`);
  for (const [k, e] of [...byName].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top))
    console.log(`  ${mib(e.bytes).padStart(8)}  ${String(e.n).padStart(8)}  ${k}`);
  console.log('\nsingle objects of 256 KiB or more (MiB):');
  for (const l of largest.sort((a, b) => b.bytes - a.bytes).slice(0, top))
    console.log(`  ${mib(l.bytes).padStart(8)}  ${l.label}`);
}
