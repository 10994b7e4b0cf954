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
