/**
 * What one triage request allocates, and where: V8's sampling heap profiler over `--requests`
 * sequential `POST /api/v1/triage` in process (`app.inject`, the instant fake provider in a child
 * process), with the objects that GC has already collected included, so the figure is what was
 * allocated rather than what is still alive. Allocation is what the young generation has to
 * absorb: the more of it a request leaves alive at a scavenge, the more is promoted and the sooner
 * a major GC (bench/triage/README.md, "the web process's young generation"). Byte counts do not
 * depend on the machine's load.
 *
 *   npx tsx bench/triage/alloc-per-request.ts [--requests 2000] [--top 30] [--survivors]
 *
 * Prints the sampled bytes a request, the allocating functions, and the same bytes by the
 * innermost frame of `src/` that led to them (where the service can change something).
 *
 * `--survivors` counts only what outlived a scavenge (objects collected by one are left out; two
 * scavenges after the last request drop what was merely still in the young generation): what a
 * request leaves alive long enough to be copied and promoted, which is what makes scavenges
 * long and major GCs come.
 */
import { fork } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createBenchDatabase } from '../lib/bench-db.js';
import { triageInProcess } from '../lib/triage-request.js';

/** A node of the sampling heap profile. */
interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

if (process.argv.includes('--serve-fake')) {
  const { startOpenAiFake } = await import('../../test/helpers/fake-providers/openai-fake.js');
  const fake = await startOpenAiFake();
  process.on('disconnect', () => process.exit(0));
  process.send!({ url: fake.url });
} else {
  await main();
}

/** A frame's file, relative to the repository or to node_modules. */
function fileOf(url: string): string {
  if (url.includes('node_modules/')) return url.split('node_modules/').pop()!;
  const src = url.indexOf('/src/');
  return src >= 0 ? url.slice(src + 1) : url;
}

async function main() {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '2000' },
      top: { type: 'string', default: '30' },
      survivors: { type: 'boolean', default: false },
    },
  });
  const survivors = values.survivors;
  const n = Number(values.requests);
  const top = Number(values.top);
  const { signUp, startTestApp } = await import('../../test/helpers/test-app.js');
  const { remoteTriageEnv } = await import('../../test/helpers/triage-setup.js');

  const child = fork(fileURLToPath(import.meta.url), ['--serve-fake'], { execArgv: ['--import', 'tsx'] });
  const fakeUrl = await new Promise<string>((r) =>
    child.once('message', (m) => r((m as { url: string }).url)),
  );
  const db = await createBenchDatabase('bench_alloc_request');
  const t = await startTestApp({
    databaseUrl: db.url,
    redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    env: {
      PLANS_FILE: path.resolve('bench/auth/unlimited-plans.json'),
      ...remoteTriageEnv({ url: fakeUrl } as Parameters<typeof remoteTriageEnv>[0]),
    },
  });
  const { key } = await signUp(t.app, {});
  const triage = triageInProcess(t.app, key);
  for (let i = 0; i < 300; i++) await triage(); // warm-up: caches, prepared statements, JIT

  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: !survivors,
  } as never);
  for (let i = 0; i < n; i++) await triage();
  if (survivors) {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (o: { type: 'minor' }) => void;
    gc({ type: 'minor' });
    gc({ type: 'minor' });
  }
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
  session.disconnect();

  const bySite = new Map<string, number>();
  const bySrc = new Map<string, number>();
  let total = 0;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const walk = (node: ProfileNode, innermostSrc: string) => {
    const file = fileOf(node.callFrame.url);
    const src = file.startsWith('src/') ? file : innermostSrc;
    if (node.selfSize > 0) {
      total += node.selfSize;
      add(
        bySite,
        `${node.callFrame.functionName || '(anonymous)'} ${file}:${node.callFrame.lineNumber}`,
        node.selfSize,
      );
      add(bySrc, src, node.selfSize);
    }
    for (const c of node.children) walk(c, src);
  };
  walk(profile.head, '(no src/ frame: Node, Fastify, the driver on their own)');

  const table = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([where, bytes]) => ({ 'bytes a request': Math.round(bytes / n), where }));
  console.log(
    `\nPOST /api/v1/triage, ${n} requests in process: ~${(total / n / 1024).toFixed(1)} KiB ${survivors ? 'outlived a scavenge' : 'allocated'} a request`,
  );
  console.log('\nby allocating function:');
  console.table(table(bySite));
  console.log('\nby the innermost src/ frame that led to the allocation:');
  console.table(table(bySrc));

  await t.close();
  await db.drop();
  child.disconnect();
}
