import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/**
 * A fresh database per test file, so files run in parallel without seeing each other's
 * rows or queues. Returns its URL and a function that drops it.
 */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = inject('pgAdminUrl');
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client(adminUrl);
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** The Redis URL for the Redis suites, or '' when none is reachable (they then skip). */
export function testRedisUrl(): string {
  return inject('redisUrl');
}

/**
 * The two queue backends a suite runs on: PostgreSQL always, Redis when reachable. Without
 * Redis, `suite` says plainly in the output that its Redis cases are skipped.
 */
export function queueBackends(
  suite: string,
): { name: 'PostgreSQL' | 'Redis'; redisUrl: string | undefined }[] {
  const redisUrl = testRedisUrl() || undefined;
  if (!redisUrl) console.warn(`[${suite}] Redis not reachable: the Redis backend cases are SKIPPED.`);
  return [
    { name: 'PostgreSQL', redisUrl: undefined },
    { name: 'Redis', redisUrl },
  ];
}

/**
 * Environment that puts a test app's scan and export files in the suite's S3 server (the S3
 * driver), under a prefix of its own; null when no S3 server answers, after saying plainly that
 * `suite`'s S3 cases are skipped. Access key and secret are `.ci/s3-server.sh`'s (Swift's
 * tempauth test account), or TEST_S3_ACCESS_KEY_ID / TEST_S3_SECRET_ACCESS_KEY.
 */
export function testS3Env(suite: string): Record<string, string> | null {
  const endpoint = inject('s3Endpoint');
  if (!endpoint) {
    console.warn(`[${suite}] No S3 server: the S3 storage cases are SKIPPED.`);
    return null;
  }
  return {
    S3_BUCKET: process.env.TEST_S3_BUCKET ?? 'vt-tests',
    S3_ENDPOINT: endpoint,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: process.env.TEST_S3_ACCESS_KEY_ID ?? 'test:tester',
    S3_SECRET_ACCESS_KEY: process.env.TEST_S3_SECRET_ACCESS_KEY ?? 'testing',
    S3_FORCE_PATH_STYLE: 'true',
    S3_PREFIX: `t-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`,
  };
}
