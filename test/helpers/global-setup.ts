import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL URL with the right to CREATE DATABASE; each test file makes its own. */
    pgAdminUrl: string;
    /** Empty when no Redis is reachable: the Redis suites then skip, and say so. */
    redisUrl: string;
    /** The S3 endpoint of the object-storage suites, or empty when none answers (they then skip, and say so). */
    s3Endpoint: string;
  }
}

const DEFAULT_PG = 'postgres://postgres@127.0.0.1:5432/test';
const DEFAULT_REDIS = 'redis://127.0.0.1:6379';
/** `.ci/s3-server.sh`'s one-node Swift with the S3 API. */
const DEFAULT_S3 = 'http://127.0.0.1:8089';

/**
 * Finds the services the suites run against: the PostgreSQL and Redis of the machine
 * (or TEST_DATABASE_URL / TEST_REDIS_URL), else an embedded PostgreSQL, and no Redis.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let embedded: EmbeddedDatabase | null = null;
  let pgUrl = process.env.TEST_DATABASE_URL ?? DEFAULT_PG;
  if (!(await pgReachable(pgUrl))) {
    const dir = path.resolve('.data/test-postgres');
    console.warn(
      `[test setup] PostgreSQL not reachable at ${redact(pgUrl)}: starting an embedded one in ${dir}`,
    );
    embedded = await startEmbeddedPostgres(dir, 54398);
    pgUrl = embedded.url;
  }
  const redisUrl = process.env.TEST_REDIS_URL ?? DEFAULT_REDIS;
  const redisOk = await redisReachable(redisUrl);
  if (!redisOk) {
    console.warn(
      `[test setup] Redis not reachable at ${redisUrl}: the Redis suites are SKIPPED in this run.`,
    );
  }
  const s3Endpoint = process.env.TEST_S3_ENDPOINT ?? DEFAULT_S3;
  const s3Ok = await s3Reachable(s3Endpoint);
  if (!s3Ok) {
    console.warn(
      `[test setup] No S3 server at ${s3Endpoint} (start one with \`bash .ci/s3-server.sh start\`): the S3 storage suites are SKIPPED in this run.`,
    );
  }
  project.provide('s3Endpoint', s3Ok ? s3Endpoint : '');
  project.provide('pgAdminUrl', pgUrl);
  project.provide('redisUrl', redisOk ? redisUrl : '');
  return async () => {
    await embedded?.stop();
  };
}

async function pgReachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function s3Reachable(endpoint: string): Promise<boolean> {
  try {
    // Any HTTP answer means a server listens; an S3 server answers an anonymous GET / with 403.
    const res = await fetch(endpoint, { signal: AbortSignal.timeout(1500) });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

async function redisReachable(url: string): Promise<boolean> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 1500,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

function redact(url: string): string {
  return url.replace(/\/\/[^@]*@/, '//***@');
}
