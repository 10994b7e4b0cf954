import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { startOpenAiFake } from '../helpers/fake-providers/openai-fake.js';
import { startAnthropicFake } from '../helpers/fake-providers/anthropic-fake.js';
import type { FakeServer } from '../helpers/fake-providers/fake-server.js';
import { remoteTriageEnv, triageCounts } from '../helpers/triage-setup.js';

/*
 * Providers that accept a request and never answer (a 10-minute stall, past every per-hop
 * timeout of config/triage.json): a single triage request still ends at its one overall deadline
 * (TRIAGE_DEADLINE_MS, 1.5 s here), with the policy's safe answer when enrichment allows one,
 * else 503 `triage_unavailable`; nothing is billed for hops that never answered.
 */
const HUNG = [{ kind: 'slow', delayMs: 600_000, then: { kind: 'success' } }] as const;

describe('a provider that never answers', () => {
  let t: TestApp;
  let openai: FakeServer;
  let anthropic: FakeServer;

  beforeAll(async () => {
    openai = await startOpenAiFake();
    anthropic = await startAnthropicFake();
    openai.script([...HUNG]);
    anthropic.script([...HUNG]);
    t = await startTestApp({ env: { ...remoteTriageEnv(openai, anthropic), TRIAGE_DEADLINE_MS: '1500' } });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await openai?.close();
    await anthropic?.close();
  });

  const triage = (key: string, payload: object) =>
    t.app.inject({ method: 'POST', url: '/api/v1/triage', headers: { 'x-api-key': key }, payload });

  it(
    'answers 503 triage_unavailable at the deadline when no safe answer can be formed',
    { timeout: 15_000 },
    async () => {
      const { key, workspaceId } = await signUp(t.app);
      const sent = openai.requests.length + anthropic.requests.length;
      // No CVE: nothing the policy could answer from alone.
      const res = await triage(key, {
        title: 'Weak TLS cipher',
        severity: 'LOW',
        description: 'TLS 1.0 on an internal host',
      });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({
        type: 'https://docs.vulntriage.dev/errors/triage_unavailable',
        title: 'Triage unavailable',
        status: 503,
        code: 'triage_unavailable',
        detail: 'No model could answer and no safe answer could be formed from enrichment; retry later.',
        requestId: expect.any(String),
      });
      // The request reached a provider (it hung there), and was cut off by the deadline.
      expect(openai.requests.length + anthropic.requests.length).toBeGreaterThan(sent);
      expect(await triageCounts(t, workspaceId)).toMatchObject({ results: 0, calls: 0, used: 0 });
    },
  );

  it(
    "answers with the policy's safe answer at the deadline when enrichment allows one",
    { timeout: 15_000 },
    async () => {
      const { key } = await signUp(t.app);
      await t.infra.pool.query(
        `INSERT INTO kev_entries (cve_id, known_ransomware) VALUES ('CVE-2021-44228', true) ON CONFLICT DO NOTHING`,
      );
      const res = await triage(key, {
        title: 'Log4Shell',
        severity: 'CRITICAL',
        cveIds: ['CVE-2021-44228'],
        asset: { type: 'APPLICATION', environment: 'PRODUCTION', internetExposed: true },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ model: 'policy:ssvc', priority: 'CRITICAL' });
    },
  );
});
