/**
 * What a provider call leaves alive past a scavenge, with and without an `AbortSignal` passed to
 * undici: `--requests` sequential POSTs through an undici `Pool` (as `pooled-post.ts` sends them,
 * each with its own `AbortController` and a cleared 20 s deadline timer, as the triage service
 * makes them) to a bare `node:http` server in this process, under V8's sampling heap profiler
 * with the objects collected by scavenges left out (two scavenges after the last request drop
 * what was merely still young). The two modes run in turn; what outlives a scavenge is what a
 * request makes the young generation copy and promote (bench/triage/README.md).
 *
 *   npx tsx bench/triage/abort-signal-survivors.ts [--requests 4000] [--rounds 2]
 */
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Pool } from 'undici';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '2' } },
});
const n = Number(values.requests);

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ok: true, text: 'x'.repeat(800) }));
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 256 });
const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'y'.repeat(1500) }] });

async function call(withSignal: boolean): Promise<void> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), 20_000);
  try {
    const res = await pool.request({
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      ...(withSignal ? { signal: deadline.signal } : {}),
    });
    await res.body.text();
  } finally {
    clearTimeout(timer);
  }
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (o: { type: 'minor' }) => void;
const session = new Session();
session.connect();

async function survivors(withSignal: boolean): Promise<{ perRequest: number; top: string[] }> {
  for (let i = 0; i < 500; i++) await call(withSignal);
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: false,
  } as never);
  for (let i = 0; i < n; i++) await call(withSignal);
  gc({ type: 'minor' });
  gc({ type: 'minor' });
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
  let total = 0;
  const bySite = new Map<string, number>();
  const walk = (node: ProfileNode) => {
    if (node.selfSize > 0) {
      total += node.selfSize;
      const where = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.split('/').slice(-2).join('/')}:${node.callFrame.lineNumber}`;
      bySite.set(where, (bySite.get(where) ?? 0) + node.selfSize);
    }
    node.children.forEach(walk);
  };
  walk(profile.head);
  const top = [...bySite]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([where, bytes]) => `${Math.round(bytes / n)} ${where}`);
  return { perRequest: Math.round(total / n), top };
}

for (let round = 1; round <= Number(values.rounds); round++) {
  for (const withSignal of [true, false]) {
    const r = await survivors(withSignal);
    console.log(
      `round ${round}, ${withSignal ? 'with the signal' : 'no signal'}: ${r.perRequest} bytes a request outlived a scavenge; ${r.top.join('; ')}`,
    );
  }
}
session.disconnect();
await pool.close();
server.close();
