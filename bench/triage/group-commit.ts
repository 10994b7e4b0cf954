/**
 * What group commit of single answers saves: `POST /api/v1/triage` on the local
 * engine, in process (`app.inject`), closed loop at a few concurrencies, reporting the CPU a
 * request costs in this process and in the PostgreSQL backends serving it (read from /proc, so
 * other work on the machine is not counted), the statements that stored the answers and the
 * commits they made. Throughput on a shared machine follows the CPU share the run gets; the CPU
 * per request does not, which is why it is the headline here.
 *
 *   npx tsx bench/triage/group-commit.ts [--requests 3000] [--concurrency 1,16,64]
 *
 * Runs against whatever build is in the current directory: run it in two checkouts, alternately,
 * for a before/after in one session.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { signUp, startTestApp } from '../../test/helpers/test-app.js';
import { createBenchDatabase } from '../lib/bench-db.js';
import { triageInProcess } from '../lib/triage-request.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '1,16,64' },
  },
});
const N = Number(values.requests);
const levels = values.concurrency.split(',').map(Number);

/** Statements that store single answers, by name, while `capture` is on. */
const statements = new Map<string, number>();
let capture = false;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as { query: unknown }).query = function (this: unknown, ...args: unknown[]) {
  const name = (args[0] as { name?: string } | undefined)?.name;
  if (capture && (name === 'record-triage' || name === 'record-triages'))
    statements.set(name, (statements.get(name) ?? 0) + 1);
  return query.apply(this, args);
};

const TICK_US = 1e6 / 100; // /proc/<pid>/stat counts clock ticks (USER_HZ = 100)
function procCpuUs(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_US; // utime, stime
  } catch {
    return 0; // the backend has gone
  }
}

const db = await createBenchDatabase('bench_group_commit');
const dbName = new URL(db.url).pathname.slice(1);
const t = await startTestApp({
  databaseUrl: db.url,
  redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  env: { PLANS_FILE: path.resolve('bench/auth/unlimited-plans.json'), LOG_LEVEL: 'silent' },
});
const { key } = await signUp(t.app, {});
const triage = triageInProcess(t.app, key);
const observer = new pg.Client(db.url);
await observer.connect();
const backends = async () =>
  (
    await observer.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [dbName],
    )
  ).rows.map((r) => r.pid);
const commits = async () =>
  Number(
    (await observer.query(`SELECT xact_commit FROM pg_stat_database WHERE datname = $1`, [dbName])).rows[0]
      .xact_commit,
  );

async function run(concurrency: number, n: number) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < n) await triage();
    }),
  );
}

await run(16, 500); // warm-up: every pool connection opened and its statements prepared
const rows: Record<string, string | number>[] = [];
for (const c of levels) {
  const pids = await backends();
  const pgBefore = pids.map(procCpuUs);
  const commitsBefore = await commits();
  statements.clear();
  const cpu = process.cpuUsage();
  const started = performance.now();
  capture = true;
  await run(c, N);
  capture = false;
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const pgUs = pids.reduce((sum, pid, i) => sum + procCpuUs(pid) - pgBefore[i]!, 0);
  const newBackends = (await backends()).filter((p) => !pids.includes(p)).length;
  const commitsMade = (await commits()) - commitsBefore - 1; // less the observer's own read
  rows.push({
    concurrency: c,
    requests: N,
    'req/s': Math.round(N / (wall / 1000)),
    'node CPU µs/req': Math.round((used.user + used.system) / N),
    'postgres CPU µs/req': Math.round(pgUs / N),
    'single stores': statements.get('record-triage') ?? 0,
    'group stores': statements.get('record-triages') ?? 0,
    'commits/req': +(commitsMade / N).toFixed(2),
    'new backends': newBackends,
  });
}
await observer.end();
await t.close();
await db.drop();
console.log(
  `\nPOST /api/v1/triage, local engine, in process, closed loop (load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`,
);
console.table(rows);
