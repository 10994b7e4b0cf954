import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  DeleteObjectCommand,
  ListMultipartUploadsCommand,
  AbortMultipartUploadCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3';
import { createS3Client } from '../../src/app/object-storage.js';
import { startServerProcess, type ServerProcess } from '../../test/helpers/server-process.js';

/** Which store a round runs on: the disk driver (the baseline) or the S3 driver. */
export type Driver = 'disk' | 's3';

/**
 * The S3 server of the bench: `.ci/s3-server.sh`'s one-node Swift unless BENCH_S3_* say otherwise.
 * Each run keeps its objects under a prefix of its own, removed by {@link cleanS3Prefix}.
 */
export function benchS3Env(): Record<string, string> {
  return {
    S3_BUCKET: process.env.BENCH_S3_BUCKET ?? 'vt-bench',
    S3_ENDPOINT: process.env.BENCH_S3_ENDPOINT ?? 'http://127.0.0.1:8089',
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: process.env.BENCH_S3_ACCESS_KEY_ID ?? 'test:tester',
    S3_SECRET_ACCESS_KEY: process.env.BENCH_S3_SECRET_ACCESS_KEY ?? 'testing',
    S3_FORCE_PATH_STYLE: 'true',
    S3_PREFIX: `bench-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`,
  };
}

/** Removes every object and open multipart upload below the run's prefix. */
export async function cleanS3Prefix(env: Record<string, string>): Promise<void> {
  const client = createS3Client({
    bucket: env.S3_BUCKET!,
    prefix: env.S3_PREFIX!,
    region: env.S3_REGION!,
    endpoint: env.S3_ENDPOINT!,
    forcePathStyle: true,
    credentials: { accessKeyId: env.S3_ACCESS_KEY_ID!, secretAccessKey: env.S3_SECRET_ACCESS_KEY! },
  });
  const Bucket = env.S3_BUCKET!;
  const Prefix = `${env.S3_PREFIX!}/`;
  try {
    const listed = await client.send(new ListObjectsV2Command({ Bucket, Prefix }));
    for (const o of listed.Contents ?? [])
      await client.send(new DeleteObjectCommand({ Bucket, Key: o.Key! }));
    const open = await client.send(new ListMultipartUploadsCommand({ Bucket, Prefix }));
    for (const u of open.Uploads ?? [])
      await client.send(new AbortMultipartUploadCommand({ Bucket, Key: u.Key!, UploadId: u.UploadId! }));
  } finally {
    client.destroy();
  }
}

export { cpuOf, memoryOf, resetPeak } from '../lib/process-stats.js';

/** A `web` and a `worker` process on one store, as the Procfile runs them (docs/deploy.md). */
export interface Deployment {
  driver: Driver;
  web: ServerProcess;
  worker: ServerProcess;
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts `web` and `worker` as two child processes sharing the database, a Redis prefix and the
 * store: a temporary folder on disk, or the S3 bucket and prefix of `s3Env`.
 */
export async function startDeployment(
  driver: Driver,
  base: { databaseUrl: string; s3Env: Record<string, string>; compiled: boolean },
): Promise<Deployment> {
  const dir = mkdtempSync(path.join(tmpdir(), 'vt-bench-store-'));
  const env = {
    DATABASE_URL: base.databaseUrl,
    KEY_PEPPER: 'bench-pepper-'.padEnd(48, 'x'),
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_PREFIX: `b${randomBytes(4).toString('hex')}`,
    LOG_LEVEL: 'warn',
    PLANS_FILE: 'bench/auth/unlimited-plans.json',
    DATA_DIR: dir,
    SCAN_STORAGE_DIR: path.join(dir, 'scans'),
    // The disk driver refuses uploads below this much free space; the bench's disk may be small.
    SCAN_STORAGE_MIN_FREE_BYTES: '0',
    ...(driver === 's3' ? base.s3Env : {}),
  };
  const options = { compiled: base.compiled };
  const web = await startServerProcess('web', env, options);
  // BENCH_WORKER_NODE_ARGS: node options for the worker alone, e.g. a heap cap to probe its RSS.
  const workerArgs = process.env.BENCH_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const worker = await startServerProcess('worker', env, { ...options, nodeArgs: workerArgs }).catch(
    async (err: unknown) => {
      await web.stop();
      throw err;
    },
  );
  return {
    driver,
    web,
    worker,
    url: web.url,
    async stop() {
      await Promise.all([web.stop(), worker.stop()]);
      if (process.env.BENCH_SERVER_OUTPUT) console.log(web.output(), worker.output());
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Median of a list of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
