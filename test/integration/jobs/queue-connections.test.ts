import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { queueBackends } from '../../helpers/db.js';
import { maintenanceRun } from '../../../src/app/workers.js';

/**
 * A process opens ONE queue per name (STYLE: wiring). Before, `queues.queue(name)` opened a new
 * BullMQ queue on every call and kept it until shutdown: each batch request and each maintenance
 * run left one more Redis connection open, or on PostgreSQL one more pool (and migration check).
 * The kit's connections are named `<namespace>:queue-kit`, so they can be counted here while other
 * suites share the same Redis and PostgreSQL.
 */
const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of opened.reverse()) await o.close();
});

/** Connections the app's queue kit holds right now, on its backend. */
async function kitConnections(t: TestApp, redisUrl: string | undefined): Promise<number> {
  const name = t.infra.queues.connectionName;
  if (redisUrl) {
    const admin = new Redis(redisUrl);
    try {
      const list = String(await admin.client('LIST'));
      return list.split('\n').filter((line) => line.includes(` name=${name} `)).length;
    } finally {
      admin.disconnect();
    }
  }
  const admin = new pg.Client(t.databaseUrl);
  await admin.connect();
  try {
    const { rows } = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = $1`,
      [name],
    );
    return rows[0]!.n;
  } finally {
    await admin.end();
  }
}

describe.each(queueBackends('queue-connections.test'))('queue connections on $name', ({ name, redisUrl }) => {
  it.skipIf(name === 'Redis' && !redisUrl)(
    'stay flat over 50 batch requests and 5 maintenance runs',
    async () => {
      const t = await startTestApp(redisUrl ? { redisUrl } : {});
      opened.push(t);
      const s = await signUp(t.app, { plan: 'trial' });
      const maintenance = maintenanceRun(t.deps.config, t.infra, t.deps);
      const batch = () =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/triage/batch',
          headers: { 'x-api-key': s.key },
          payload: { items: [{ title: 'Weak TLS cipher', severity: 'LOW', description: 'TLS 1.0 enabled' }] },
        });

      // The first request and run open the queues they use (the kit opens a queue on first use).
      expect((await batch()).statusCode).toBe(202);
      await maintenance();
      const before = await kitConnections(t, redisUrl);
      expect(before).toBeGreaterThan(0);

      for (let i = 0; i < 50; i++) expect((await batch()).statusCode).toBe(202);
      for (let i = 0; i < 5; i++) await maintenance();

      // On PostgreSQL an idle pooled connection may close meanwhile: never more, perhaps fewer.
      const after = await kitConnections(t, redisUrl);
      if (redisUrl) expect(after).toBe(before);
      else expect(after).toBeLessThanOrEqual(before);
    },
    120_000,
  );
});
