import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { startOpenAiFake } from '../helpers/fake-providers/openai-fake.js';
import { startAnthropicFake } from '../helpers/fake-providers/anthropic-fake.js';
import type { FakeServer } from '../helpers/fake-providers/fake-server.js';
import { remoteTriageEnv, triageCounts } from '../helpers/triage-setup.js';

/*
 * docs/operations.md#failure-behaviour: when every tier of the escalation chain is out of provider capacity, a triage
 * request is answered 503 `overloaded` with `Retry-After` (when capacity comes back), not
 * `triage_unavailable` and not after a long wait; nothing is billed. Each provider here takes
 * one request a minute and a call waits for capacity at most 200 ms.
 */
describe('all provider tiers out of capacity', () => {
  let t: TestApp;
  let openai: FakeServer;
  let anthropic: FakeServer;

  beforeAll(async () => {
    openai = await startOpenAiFake();
    anthropic = await startAnthropicFake();
    const env = remoteTriageEnv(openai, anthropic);
    const config = JSON.parse(readFileSync(env.TRIAGE_CONFIG_FILE!, 'utf8'));
    for (const p of Object.values(config.providers) as { requestsPerMinute: number }[])
      p.requestsPerMinute = 1;
    const dir = mkdtempSync(path.join(tmpdir(), 'triage-capacity-'));
    writeFileSync(path.join(dir, 'triage.json'), JSON.stringify(config));
    t = await startTestApp({
      env: { ...env, TRIAGE_CONFIG_FILE: path.join(dir, 'triage.json'), PROVIDER_QUEUE_MAX_WAIT_MS: '200' },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await openai?.close();
    await anthropic?.close();
  });

  it('answers 503 overloaded with Retry-After and bills nothing', { timeout: 20_000 }, async () => {
    const { key, workspaceId } = await signUp(t.app);
    // No CVE: no enrichment the policy could answer from alone.
    const finding = { title: 'Weak TLS cipher', severity: 'LOW', description: 'TLS 1.0 on an internal host' };
    const triage = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/triage',
        headers: { 'x-api-key': key },
        payload: finding,
      });
    // The minute's one request of each provider: the first on OpenAI, the second on Anthropic.
    expect((await triage()).statusCode).toBe(200);
    expect((await triage()).statusCode).toBe(200);
    const before = await triageCounts(t, workspaceId);

    const started = Date.now();
    const res = await triage();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 503, code: 'overloaded' });
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const after = await triageCounts(t, workspaceId);
    expect(after.calls).toBe(before.calls);
    expect(after.used).toBe(before.used);
  });
});
