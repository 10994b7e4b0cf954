/**
 * Scan ingestion on the S3 driver against the disk driver (docs/deploy.md#object-storage), as a
 * deployment runs it: `web` and `worker` in two child processes, the upload streamed by `curl`
 * (`-T`), `GET /api/pipeline/scan/:id` polled until `completed`. Rounds alternate disk and S3
 * (disk first: the baseline), each on a fresh web/worker pair, so both drivers meet the same
 * machine load. Reports upload → completed, MB/s, and the peak RSS (VmHWM, every thread) of the
 * web and of the worker process during the round, reset after start-up.
 *
 *   npx tsx bench/storage/ingest-s3.ts [--size 100MB] [--format nessus,sarif] [--rounds 3] [--compiled]
 *
 * `--compiled`: `npm run build` first; the processes then run `dist/src/main.js` as `npm start`
 * does. The S3 server is `.ci/s3-server.sh`'s unless BENCH_S3_ENDPOINT (and BENCH_S3_*) say otherwise.
 */
import { statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { curlUpload } from '../lib/process-stats.js';
import { signUpOverHttp } from '../../test/helpers/server-process.js';
import { createBenchDatabase } from '../lib/bench-db.js';
import { FORMATS, generate, parseFormats, parseSize } from '../parsers/generate.js';
import { createOrm, migrate } from '../../src/db/orm.js';
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
    size: { type: 'string', default: '100MB' },
    format: { type: 'string', default: 'nessus,sarif' },
    rounds: { type: 'string', default: '3' },
    compiled: { type: 'boolean', default: false },
  },
});
const formats = parseFormats(values.format!);
const rounds = Number(values.rounds);
const files = new Map<string, string>();
for (const f of formats) files.set(f, await generate(f, parseSize(values.size!), values.size!.toLowerCase()));

const db = await createBenchDatabase('bench_s3_ingest');
const orm = await createOrm(db.url);
await migrate(orm, db.url);
await orm.close();
const s3Env = benchS3Env();

interface Row {
  format: string;
  round: number;
  driver: Driver;
  MiB: number;
  findings: number;
  'upload s': number;
  'upload → completed s': number;
  'MB/s': number;
  'web idle MiB': number;
  'web peak MiB': number;
  'worker idle MiB': number;
  'worker peak MiB': number;
  'web CPU s': number;
  'worker CPU s': number;
  'load avg': number;
}
const rows: Row[] = [];
let key: string | null = null;
try {
  for (const format of formats) {
    const file = files.get(format)!;
    const bytes = statSync(file).size;
    for (let round = 1; round <= rounds; round++) {
      for (const driver of ['disk', 's3'] as const) {
        const d = await startDeployment(driver, { databaseUrl: db.url, s3Env, compiled: values.compiled! });
        try {
          key ??= (await signUpOverHttp(d.url)).key;
          const webPid = d.web.child.pid!;
          const workerPid = d.worker.child.pid!;
          resetPeak(webPid);
          resetPeak(workerPid);
          const idle = [memoryOf(webPid).rssMiB, memoryOf(workerPid).rssMiB];
          const cpu0 = [cpuOf(webPid), cpuOf(workerPid)];
          const load = loadavg()[0]!;
          const t0 = performance.now();
          const { answer, uploadS } = curlUpload(
            d.url,
            key,
            file,
            FORMATS[format].contentType,
            `bench-${format}`,
          );
          const { scanId } = JSON.parse(answer) as { scanId?: string };
          if (!scanId) throw new Error(`upload refused: ${answer}`);
          let scan: { status: string; counts?: { findings?: number }; error?: unknown };
          for (;;) {
            const res = await fetch(`${d.url}/api/pipeline/scan/${scanId}`, {
              headers: { 'x-api-key': key },
            });
            scan = (await res.json()) as typeof scan;
            if (scan.status === 'completed' || scan.status === 'failed') break;
            await new Promise((r) => setTimeout(r, 50));
          }
          const totalS = (performance.now() - t0) / 1000;
          if (scan.status !== 'completed')
            throw new Error(`scan ${scan.status}: ${JSON.stringify(scan.error)}`);
          const row: Row = {
            format,
            round,
            driver,
            MiB: Math.round(bytes / 2 ** 20),
            findings: scan.counts?.findings ?? 0,
            'upload s': +uploadS.toFixed(2),
            'upload → completed s': +totalS.toFixed(2),
            'MB/s': +(bytes / 1e6 / totalS).toFixed(1),
            'web idle MiB': idle[0]!,
            'web peak MiB': memoryOf(webPid).peakMiB,
            'worker idle MiB': idle[1]!,
            'worker peak MiB': memoryOf(workerPid).peakMiB,
            'web CPU s': +(cpuOf(webPid) - cpu0[0]!).toFixed(1),
            'worker CPU s': +(cpuOf(workerPid) - cpu0[1]!).toFixed(1),
            'load avg': +load.toFixed(1),
          };
          rows.push(row);
          console.log(JSON.stringify(row));
        } finally {
          await d.stop();
        }
      }
    }
  }
  console.log(
    `\nupload → completed, web and worker in their own processes (${values.compiled ? 'compiled' : 'tsx'}), ${values.size} files, Node ${process.version}`,
  );
  console.table(rows);
  console.log(
    'format | disk s (median) | S3 s (median) | S3 speed ÷ disk | web peak MiB disk / S3 | worker peak MiB disk / S3',
  );
  for (const format of formats) {
    const of = (driver: Driver) => rows.filter((r) => r.format === format && r.driver === driver);
    const [disk, s3] = [of('disk'), of('s3')];
    const t = (rs: Row[]) => median(rs.map((r) => r['upload → completed s']));
    const peak = (rs: Row[], k: 'web peak MiB' | 'worker peak MiB') => Math.max(...rs.map((r) => r[k]));
    console.log(
      `${format} | ${t(disk).toFixed(2)} | ${t(s3).toFixed(2)} | ${(t(disk) / t(s3)).toFixed(2)} | ` +
        `${peak(disk, 'web peak MiB')} / ${peak(s3, 'web peak MiB')} | ${peak(disk, 'worker peak MiB')} / ${peak(s3, 'worker peak MiB')}`,
    );
  }
} finally {
  await cleanS3Prefix(s3Env).catch((err: unknown) => console.error('S3 clean-up failed:', err));
  await db.drop();
}
