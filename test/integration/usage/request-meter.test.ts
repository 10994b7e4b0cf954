import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { createRequestMeter } from '../../../src/domain/usage/request-meter.js';

/**
 * The request meter (docs/api.md#keys) against the real database: a key deleted with its workspace
 * (docs/operations.md#end-of-life) while its counts wait in a process's buffer must not stop that
 * process from writing every other key's counts.
 */
describe('request meter', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const countsOf = async (keyId: string) =>
    (
      await t.infra.pool.query<{ n: number }>(
        `SELECT coalesce(sum(requests), 0)::int AS n FROM key_request_counters WHERE key_id = $1`,
        [keyId],
      )
    ).rows[0]!.n;

  it("writes the other keys' counts after a key it counted was deleted", async () => {
    const gone = await signUp(t.app, { workspaceName: 'Gone Co' });
    const kept = await signUp(t.app, { workspaceName: 'Kept Co' });
    const meter = createRequestMeter(t.infra.pool, 60_000);
    try {
      const now = new Date();
      meter.record(gone.keyId, gone.workspaceId, now);
      meter.record(kept.keyId, kept.workspaceId, now);
      meter.record(kept.keyId, kept.workspaceId, now);
      await t.infra.pool.query(`DELETE FROM api_keys WHERE id = $1`, [gone.keyId]);
      await meter.flush();
      expect(await countsOf(kept.keyId)).toBe(2);
      meter.record(kept.keyId, kept.workspaceId, new Date());
      await meter.flush();
      expect(await countsOf(kept.keyId)).toBe(3);
      expect(await countsOf(gone.keyId)).toBe(0);
    } finally {
      await meter.stop();
    }
  });
});
