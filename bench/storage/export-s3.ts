/**
 * A large case export job written into S3 against the same export on disk
 * (docs/exports.md, docs/deploy.md#object-storage): `web` and `worker` in two child processes,
 * `POST /api/v1/exports` then `GET /api/v1/exports/:id` polled until `completed`. The worker
 * renders the export from the database and streams it into the store (a multipart upload on
 * S3, a `.part` file renamed on disk). Rounds alternate disk and S3 (disk first: the baseline),
 * each on a fresh web/worker pair; the workspace is seeded once with `generate_series`.
 * Reports create → completed, the file's size, and the worker's peak RSS (VmHWM, every thread)
 * during the job, reset after start-up.
 *
 *   npx tsx bench/storage/export-s3.ts [--cases 1000000] [--format csv] [--rounds 3] [--compiled]
 *     [--drivers disk,s3]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createOrm, migrate } from '../../src/db/orm.js';
import { signUpOverHttp } from '../../test/helpers/server-process.js';
import { createBenchDatabase } from '../lib/bench-db.js';
import { seedCases } from '../lib/seed-cases.js';
import {
  benchS3Env,
  cleanS3Prefix,
  cpuOf,
  median,
  memoryOf,
  resetPeak,
  startDeployment,
  type Driver,
} from './deployment.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '1000000' },
    format: { type: 'string', default: 'csv' },
    rounds: { type: 'string', default: '3' },
    compiled: { type: 'boolean', default: false },
    drivers: { type: 'string', default: 'disk,s3' },
  },
});
const N = Number(values.cases);
const rounds = Number(values.rounds);
const drivers = values.drivers!.split(',').filter((d): d is Driver => d === 'disk' || d === 's3');

const db = await createBenchDatabase('bench_s3_export');
const orm = await createOrm(db.url);
await migrate(orm, db.url);
await orm.close();
const s3Env = benchS3Env();

interface Row {
  round: number;
  driver: Driver;
  rows: number;
  MB: number;
  'create → completed s': number;
  'cases/s': number;
  'worker idle MiB': number;
  'worker peak MiB': number;
  'worker CPU s': number;
  'load avg': number;
}
const rows: Row[] = [];
let key: string | null = null;
try {
  for (let round = 1; round <= rounds; round++) {
    for (const driver of drivers) {
      const d = await startDeployment(driver, { databaseUrl: db.url, s3Env, compiled: values.compiled! });
      try {
        if (key === null) {
          const signup = await signUpOverHttp(d.url);
          key = signup.key;
          console.log(`seeding ${N.toLocaleString()} cases (one finding each)…`);
          const client = new pg.Client(db.url);
          await client.connect();
          await seedCases(client, signup.workspaceId, N);
          await client.end();
        }
        const workerPid = d.worker.child.pid!;
        resetPeak(workerPid);
        const idle = memoryOf(workerPid).rssMiB;
        const cpu0 = cpuOf(workerPid);
        const load = loadavg()[0]!;
        const headers = { 'x-api-key': key, 'content-type': 'application/json' };
        const t0 = performance.now();
        const created = await fetch(`${d.url}/api/v1/exports`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ subject: 'cases', format: values.format }),
        });
        if (created.status !== 202)
          throw new Error(`export refused: ${created.status} ${await created.text()}`);
        const { id } = (await created.json()) as { id: string };
        let e: { status: string; rowsWritten: number | null; bytes: number | null; error: unknown };
        for (;;) {
          e = (await (await fetch(`${d.url}/api/v1/exports/${id}`, { headers })).json()) as typeof e;
          if (e.status === 'completed' || e.status === 'failed') break;
          await new Promise((r) => setTimeout(r, 100));
        }
        const s = (performance.now() - t0) / 1000;
        if (e.status !== 'completed') throw new Error(`export ${e.status}: ${JSON.stringify(e.error)}`);
        const row: Row = {
          round,
          driver,
          rows: e.rowsWritten ?? 0,
          MB: +((e.bytes ?? 0) / 1e6).toFixed(1),
          'create → completed s': +s.toFixed(2),
          'cases/s': Math.round((e.rowsWritten ?? 0) / s),
          'worker idle MiB': idle,
          'worker peak MiB': memoryOf(workerPid).peakMiB,
          'worker CPU s': +(cpuOf(workerPid) - cpu0).toFixed(1),
          'load avg': +load.toFixed(1),
        };
        rows.push(row);
        console.log(JSON.stringify(row));
      } finally {
        await d.stop();
      }
    }
  }
  console.log(
    `\n${N.toLocaleString()}-case ${values.format} export job, worker in its own process (${values.compiled ? 'compiled' : 'tsx'}), Node ${process.version}`,
  );
  console.table(rows);
  const of = (driver: Driver) => rows.filter((r) => r.driver === driver);
  const t = (rs: Row[]) => median(rs.map((r) => r['create → completed s']));
  const peak = (rs: Row[]) => Math.max(...rs.map((r) => r['worker peak MiB']));
  console.log(
    `median s disk ${t(of('disk')).toFixed(2)} / S3 ${t(of('s3')).toFixed(2)} (S3 speed ÷ disk ${(t(of('disk')) / t(of('s3'))).toFixed(2)}); ` +
      `worker peak MiB disk ${peak(of('disk'))} / S3 ${peak(of('s3'))}`,
  );
} finally {
  await cleanS3Prefix(s3Env).catch((err: unknown) => console.error('S3 clean-up failed:', err));
  await db.drop();
}
