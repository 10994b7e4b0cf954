/**
 * Revocation latency across processes (docs/operations.md#failure-behaviour): two `web` processes on one
 * database and one Redis (the same REDIS_PREFIX, as one deployment). For each of N keys: the key
 * is used on process A (so A has it cached, for KEY_CACHE_TTL_MS = 30 s by default), then
 * revoked through the console on process B, and A is polled every 5 ms with the key until it
 * answers 401. In every other round the invalidation subscribers are killed first (`CLIENT KILL`
 * of every connection named `<prefix>:key-invalidation`), so the message may be lost and only
 * the resubscribe reset and the key-version check can make A refuse in time.
 *
 * Latency is from B's 200 to A's first 401 (A's answers before that are the exposure window).
 *
 *   npx tsx bench/faults/revocation-latency.ts [--rounds 100]
 */
import { Redis } from 'ioredis';
import { createBenchDatabase } from '../lib/bench-db.js';
import { signUpOverHttp, startServerProcess } from '../../test/helpers/server-process.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
const rounds = Number(opt('rounds', '100'));
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `bench${Math.random().toString(36).slice(2, 8)}`;

const db = await createBenchDatabase('bench_revocation');
const env = {
  DATABASE_URL: db.url,
  KEY_PEPPER: 'bench-pepper-'.padEnd(48, 'x'),
  REDIS_URL: redisUrl,
  REDIS_PREFIX: prefix,
  LOG_LEVEL: 'silent',
  PLANS_FILE: 'bench/auth/unlimited-plans.json',
  // Every 401 of a revoked key counts as a failed authentication of this address (docs/api.md#keys).
  AUTH_FAILURES_PER_MINUTE: '1000000',
};
const a = await startServerProcess('web', env);
const b = await startServerProcess('web', env);
const admin = new Redis(redisUrl);
const session = await signUpOverHttp(a.url);

async function newKey(i: number): Promise<{ id: string; key: string }> {
  const headers = {
    cookie: session.cookie,
    'x-csrf-token': session.csrf,
    'content-type': 'application/json',
  };
  const res = await fetch(`${a.url}/api/console/keys`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ label: `bench ${i}`, scopes: ['usage:read'] }),
  });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${await res.text()}`);
  const created = (await res.json()) as { id: string; revealUrl: string };
  const reveal = await fetch(`${a.url}/api/console${created.revealUrl}`, {
    headers: { cookie: session.cookie },
  });
  return { id: created.id, key: ((await reveal.json()) as { key: string }).key };
}

let lastBody = '';
const me = async (key: string) => {
  const res = await fetch(`${a.url}/api/v1/keys/me`, { headers: { 'x-api-key': key } });
  lastBody = await res.text();
  return res.status;
};

async function killSubscribers(): Promise<number> {
  const list = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
  const ids = list
    .split('\n')
    .filter((l) => l.includes(`name=${prefix}:key-invalidation `))
    .map((l) => /\bid=(\d+)/.exec(l)?.[1])
    .filter((x): x is string => x !== undefined);
  for (const id of ids) await admin.client('KILL', 'ID', id);
  return ids.length;
}

const results: { drop: boolean; ms: number; acceptedAfter: number }[] = [];
let killed = 0;
try {
  for (let i = 0; i < rounds; i++) {
    const k = await newKey(i);
    for (let n = 0; n < 2; n++) {
      const status = await me(k.key);
      if (status !== 200) throw new Error(`round ${i}: a new key answered ${status} ${lastBody}`);
    }
    const drop = i % 2 === 1;
    if (drop) killed += await killSubscribers();
    const res = await fetch(`${b.url}/api/console/keys/${k.id}/revoke`, {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
      body: '{}',
    });
    if (res.status !== 200) throw new Error(`revoke: ${res.status} ${await res.text()}`);
    const revokedAt = performance.now();
    let acceptedAfter = 0;
    for (;;) {
      const status = await me(k.key);
      if (status === 401) break;
      acceptedAfter++;
      if (performance.now() - revokedAt > 60_000) throw new Error('still accepted after 60 s');
      await new Promise((r) => setTimeout(r, 5));
    }
    results.push({ drop, ms: performance.now() - revokedAt, acceptedAfter });
    // Let the subscribers come back before the next round (as they do within a second or two).
    if (drop) await new Promise((r) => setTimeout(r, 300));
  }
} finally {
  admin.disconnect();
  await a.stop('SIGTERM');
  await b.stop('SIGTERM');
  await db.drop();
}

function summary(rows: typeof results) {
  const ms = rows.map((r) => r.ms).sort((x, y) => x - y);
  const q = (p: number) => +(ms[Math.min(ms.length - 1, Math.floor(p * ms.length))] ?? NaN).toFixed(1);
  return {
    rounds: rows.length,
    'p50 ms': q(0.5),
    'p99 ms': q(0.99),
    'max ms': +(ms.at(-1) ?? NaN).toFixed(1),
    'accepted after revoke (max)': Math.max(0, ...rows.map((r) => r.acceptedAfter)),
    'over 1 s': rows.filter((r) => r.ms > 1000).length,
  };
}
console.log(`\nrevocation latency, 2 web processes on Redis (${killed} subscriber connections killed)`);
console.table({
  'no drop': summary(results.filter((r) => !r.drop)),
  'subscribers killed': summary(results.filter((r) => r.drop)),
  all: summary(results),
});
