import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FakeServer } from './fake-providers/fake-server.js';
import type { TestApp } from './test-app.js';
import type { PlanLimits } from '../../src/lib/config.js';
import type { WorkerHandle } from '../../src/jobs/queue-kit.js';
import { startTriageWorker } from '../../src/workers/triage-worker.js';
import type { BatchProcessorDeps } from '../../src/domain/triage/batch-processor.js';
import { makeWebhookDeliverer } from '../../src/domain/triage/webhook.js';

/**
 * Settings and probes shared by the triage suites: providers pointed at fake servers, plans
 * with chosen limits, a real triage worker over a test app, and the counters that say whether
 * an AI call was answered, billed and counted exactly once.
 */

/**
 * Env for the test app so that OpenAI (and, given, Anthropic) tiers call the fakes: the
 * default chain of `config/triage.json`, with provider rate limits lifted so only the quota
 * under test refuses anything. A tier whose provider has no fake is served by the local engine.
 */
export function remoteTriageEnv(openai: FakeServer, anthropic?: FakeServer): Record<string, string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'triage-config-'));
  const base = JSON.parse(readFileSync('config/triage.json', 'utf8'));
  for (const p of Object.values(base.providers) as { requestsPerMinute: number; tokensPerMinute: number }[]) {
    p.requestsPerMinute = 100_000;
    p.tokensPerMinute = 100_000_000;
  }
  writeFileSync(path.join(dir, 'triage.json'), JSON.stringify(base));
  return {
    OPENAI_API_KEY: 'sk-test-quota',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    TRIAGE_CONFIG_FILE: path.join(dir, 'triage.json'),
    ...(anthropic ? { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: anthropic.url } : {}),
  };
}

/** Env for a plans file where `free` and `service` (hence `trial`) both have `limits`. */
export function plansEnv(limits: Omit<PlanLimits, 'scanMaxBytes'>): Record<string, string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'plans-'));
  const plan = { ...limits, scanMaxBytes: null };
  writeFileSync(
    path.join(dir, 'plans.json'),
    JSON.stringify({ trialDays: 14, plans: { free: plan, service: plan } }),
  );
  return { PLANS_FILE: path.join(dir, 'plans.json') };
}

/**
 * A workspace's stored answers, AI calls in the ledger, and this month's quota counters
 * (`used`, `reserved`, and the reservations still open).
 */
export async function triageCounts(t: TestApp, workspaceId: string) {
  const r = await t.infra.pool.query(
    `SELECT (SELECT count(*) FROM triage_results WHERE workspace_id = $1)::int AS results,
            (SELECT count(*) FROM usage_ledger WHERE workspace_id = $1 AND ai_call)::int AS calls,
            (SELECT coalesce(sum(used), 0) FROM ai_call_quota WHERE workspace_id = $1)::int AS used,
            (SELECT coalesce(sum(reserved), 0) FROM ai_call_quota WHERE workspace_id = $1)::int AS reserved,
            (SELECT count(*) FROM quota_reservations WHERE workspace_id = $1)::int AS reservations`,
    [workspaceId],
  );
  return r.rows[0] as {
    results: number;
    calls: number;
    used: number;
    reserved: number;
    reservations: number;
  };
}

/**
 * A real BullMQ triage worker over the app's queues and triage service, closed by the caller;
 * `overrides` replace its dependencies (a faulty triage service, a recording deliverer).
 */
export function startTriageTestWorker(
  t: TestApp,
  overrides: Partial<BatchProcessorDeps> = {},
  concurrency = 8,
): WorkerHandle {
  return startTriageWorker(
    t.infra.queues,
    {
      db: t.infra.pool,
      triage: t.deps.triage,
      pepper: t.infra.pepper,
      clock: t.clock,
      deliver: makeWebhookDeliverer(t.deps.config),
      batchDeadlineMs: t.deps.config.batchDeadlineMs,
      ...overrides,
    },
    { concurrency, logger: t.deps.logger },
  );
}

/** `GET /api/v1/triage/batch/:id` until the batch has finished (or `timeoutMs` passed). */
export async function pollBatch(t: TestApp, key: string, id: string, timeoutMs = 120_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/triage/batch/${id}?limit=500`,
      headers: { 'x-api-key': key },
    });
    const body = res.json();
    if (['completed', 'failed', 'partial'].includes(body.status) || Date.now() > until) return body;
    await new Promise((r) => setTimeout(r, 200));
  }
}
