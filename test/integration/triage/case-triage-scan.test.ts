import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createKey, signUp } from '../../helpers/test-app.js';
import { queueBackends } from '../../helpers/db.js';
import { startScanApp, uploadScan, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { plansEnv, remoteTriageEnv, startTriageTestWorker } from '../../helpers/triage-setup.js';
import { startOpenAiFake } from '../../helpers/fake-providers/openai-fake.js';
import type { FakeServer } from '../../helpers/fake-providers/fake-server.js';
import models from '../../../config/models.json' with { type: 'json' };

/**
 * Case triage after an upload (docs/cases.md#case-triage): `triage=new` triages the cases a scan created
 * or reopened, `all` every case it sighted, through the batch worker on the `triage` queue,
 * billed per hop to the uploading key, and never past the month's AI calls (riskiest first).
 */
const backends = queueBackends('triage/case-triage-scan');
const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of opened.reverse()) await o.close();
});

const FIXTURE = readFileSync(path.resolve('test/fixtures/scans/openvas/many_vuln.xml'));

async function appWithWorker(redisUrl: string | undefined, env: Record<string, string>) {
  const t = await startScanApp({ ...(redisUrl ? { redisUrl } : {}), env });
  opened.push(t);
  opened.push(startTriageTestWorker(t, {}, 8));
  return t;
}

interface ScanTriage {
  status: string;
  requested: number;
  answered: number;
  failed: number;
  skippedForQuota: number;
  batchId: string | null;
  byPriority: Record<string, number>;
}

/** Uploads, waits for the scan, then for its triage to finish; the scan's final view. */
async function uploadAndTriage(t: ScanTestApp, key: string, body: Buffer, query: string, type?: string) {
  const res = await uploadScan(t.app, key, body, type ? { 'content-type': type } : {}, query);
  expect(res.statusCode, res.body).toBe(202);
  const scanId = res.json().scanId as string;
  await waitForScan(t.app, key, scanId, 60_000);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const view = (
      await t.app.inject({
        method: 'GET',
        url: `/api/pipeline/scan/${scanId}`,
        headers: { 'x-api-key': key },
      })
    ).json() as { status: string; counts: { new: number }; triage: ScanTriage | null };
    if (view.triage === null || view.triage.status === 'completed' || Date.now() > deadline)
      return { scanId, ...view };
    await new Promise((r) => setTimeout(r, 200));
  }
}

function picosPerToken(price: string): bigint {
  const [whole, frac = ''] = price.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
}

async function caseCounts(t: ScanTestApp, workspaceId: string) {
  const { rows } = await t.infra.pool.query<{ cases: number; triaged: number; history: number }>(
    `SELECT (SELECT count(*) FROM cases WHERE workspace_id = $1)::int AS cases,
            (SELECT count(*) FROM cases WHERE workspace_id = $1 AND triaged_at IS NOT NULL)::int AS triaged,
            (SELECT count(*) FROM case_triage_history WHERE workspace_id = $1)::int AS history`,
    [workspaceId],
  );
  return rows[0]!;
}

describe.each(backends)('case triage of an upload on $name', ({ name, redisUrl }) => {
  const skip = name === 'Redis' && !redisUrl;

  it.skipIf(skip)(
    'triage=new triages every new case, bills each hop to the uploader; again: nothing new; all: every sighted case',
    async () => {
      const openai: FakeServer = await startOpenAiFake([{ kind: 'success', usage: [321, 45] }]);
      opened.push(openai);
      const t = await appWithWorker(redisUrl, remoteTriageEnv(openai));
      const s = await signUp(t.app, { plan: 'trial' });

      const first = await uploadAndTriage(t, s.key, FIXTURE, '?name=nightly&triage=new');
      expect(first.status).toBe('completed');
      expect(first.counts.new).toBeGreaterThan(3);
      expect(first.triage).toEqual({
        status: 'completed',
        requested: first.counts.new,
        answered: first.counts.new,
        failed: 0,
        skippedForQuota: 0,
        batchId: first.scanId,
        byPriority: expect.any(Object),
      });
      // The summary by priority is the answered cases' current priorities.
      const { rows: byPriority } = await t.infra.pool.query<{ priority: string; n: number }>(
        `SELECT priority, count(*)::int AS n FROM cases WHERE workspace_id = $1 GROUP BY priority`,
        [s.workspaceId],
      );
      expect(first.triage!.byPriority).toEqual(Object.fromEntries(byPriority.map((r) => [r.priority, r.n])));
      expect(await caseCounts(t, s.workspaceId)).toEqual({
        cases: first.counts.new,
        triaged: first.counts.new,
        history: first.counts.new,
      });
      // Each case carries the answer of its batch item, stored as its current triage.
      const { rows: answers } = await t.infra.pool.query<{ priority: string; model: string; items: string }>(
        `SELECT c.priority, c.model, (SELECT count(*) FROM triage_batch_items i
                 WHERE i.batch_id = $2 AND i.case_id = c.id AND i.status = 'completed')::text AS items
           FROM cases c WHERE c.workspace_id = $1`,
        [s.workspaceId, first.scanId],
      );
      for (const a of answers) {
        expect(a.model).toMatch(/^(openai|local|policy):/);
        expect(a.items).toBe('1');
      }
      expect(openai.requests.length).toBeGreaterThanOrEqual(first.counts.new);

      // The ledger: every row billed to the uploading key, one AI call per case, each hop's
      // tokens at its tier's catalog price exactly.
      const ledger = await t.infra.pool.query<{
        key_id: string;
        catalog_model: string;
        i: string;
        o: string;
        picos: string;
        calls: string;
      }>(
        `SELECT key_id, catalog_model, sum(input_tokens)::text AS i, sum(output_tokens)::text AS o,
                sum(cost_picos)::text AS picos, count(*) FILTER (WHERE ai_call)::text AS calls
           FROM usage_ledger WHERE workspace_id = $1 GROUP BY key_id, catalog_model`,
        [s.workspaceId],
      );
      const price = new Map(models.models.map((m) => [m.id, m]));
      let calls = 0;
      for (const r of ledger.rows) {
        expect(r.key_id).toBe(s.keyId);
        const m = price.get(r.catalog_model)!;
        expect(BigInt(r.picos)).toBe(
          BigInt(r.i) * picosPerToken(m.inputPricePerMillion) +
            BigInt(r.o) * picosPerToken(m.outputPricePerMillion),
        );
        calls += Number(r.calls);
      }
      expect(calls).toBe(first.counts.new);
      const perHop = await t.infra.pool.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM usage_ledger WHERE workspace_id = $1 AND input_tokens = 321 AND output_tokens = 45`,
        [s.workspaceId],
      );
      expect(Number(perHop.rows[0]!.n)).toBeGreaterThan(0);
      const quota = await t.infra.pool.query<{ used: number; reserved: number }>(
        `SELECT used, reserved FROM ai_call_quota WHERE workspace_id = $1`,
        [s.workspaceId],
      );
      expect(quota.rows[0]).toEqual({ used: first.counts.new, reserved: 0 });

      // Starting the scan's triage again (a retried ingest job) adds nothing: chosen, reserved
      // and stored once; its items' jobs find them answered.
      await t.deps.caseTriage.triageScan(first.scanId);
      await new Promise((r) => setTimeout(r, 500));
      expect((await caseCounts(t, s.workspaceId)).history).toBe(first.counts.new);
      const { rows: batches } = await t.infra.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM triage_batches WHERE workspace_id = $1`,
        [s.workspaceId],
      );
      expect(batches[0]!.n).toBe(1);

      // The same file again: no case is new, so nothing is triaged or billed.
      const again = await uploadAndTriage(t, s.key, FIXTURE, '?triage=new');
      expect(again.counts.new).toBe(0);
      expect(again.triage).toEqual({
        status: 'completed',
        requested: 0,
        answered: 0,
        failed: 0,
        skippedForQuota: 0,
        batchId: null,
        byPriority: {},
      });
      expect((await caseCounts(t, s.workspaceId)).history).toBe(first.counts.new);

      // triage=all: every case the scan sighted, again.
      const all = await uploadAndTriage(t, s.key, FIXTURE, '?triage=all');
      expect(all.triage).toMatchObject({
        status: 'completed',
        requested: first.counts.new,
        answered: first.counts.new,
        skippedForQuota: 0,
      });
      expect(await caseCounts(t, s.workspaceId)).toEqual({
        cases: first.counts.new,
        triaged: first.counts.new,
        history: 2 * first.counts.new,
      });
      // No triage asked: the scan says so with null.
      const none = await uploadAndTriage(t, s.key, FIXTURE, '');
      expect(none.triage).toBeNull();
    },
    240_000,
  );

  it.skipIf(skip)(
    'a workflow whose rule selects triaged cases is handed each case triage=new answered, once',
    async () => {
      const t = await appWithWorker(redisUrl, {
        WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true',
      });
      const s = await signUp(t.app, { plan: 'trial' });
      const manager = await createKey(t.app, s, ['workflows:write', 'scans:read'], 'workflows');
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/workflows',
        headers: { 'x-api-key': manager.key },
        payload: {
          name: 'triaged',
          target: { kind: 'webhook', url: 'http://127.0.0.1:9/hook' },
          rule: { triaged: true },
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      const workflowId = created.json().id as string;

      const scan = await uploadAndTriage(t, s.key, FIXTURE, '?triage=new');
      expect(scan.triage).toMatchObject({ status: 'completed', answered: scan.counts.new });
      // No case was triaged when the scan completed; each one is handed over once its answer is stored.
      const deliveries = await t.app.inject({
        method: 'GET',
        url: `/api/v1/workflows/${workflowId}/deliveries?limit=200`,
        headers: { 'x-api-key': manager.key },
      });
      expect(deliveries.statusCode, deliveries.body).toBe(200);
      const caseIds = (deliveries.json().data as { caseId: string }[]).map((d) => d.caseId);
      expect(new Set(caseIds).size).toBe(scan.counts.new);
    },
    240_000,
  );

  it.skipIf(skip)(
    'a workspace with 5 AI calls left triages exactly the 5 riskiest new cases and reports the rest skippedForQuota',
    async () => {
      const t = await appWithWorker(
        redisUrl,
        plansEnv({ aiCallsPerMonth: 5, requestsPerMinute: 1000, batchMaxItems: 100 }),
      );
      await t.infra.pool.query(
        `INSERT INTO kev_entries (cve_id) VALUES ('CVE-2021-44228'), ('CVE-2099-0001') ON CONFLICT DO NOTHING`,
      );
      await t.infra.pool.query(
        `INSERT INTO epss_scores (cve_id, epss, percentile) VALUES ('CVE-2020-1001', 0.9, 0.99), ('CVE-2020-1002', 0.5, 0.9),
                ('CVE-2020-1006', 0.01, 0.2), ('CVE-2020-1003', 0.01, 0.2) ON CONFLICT DO NOTHING`,
      );
      await t.infra.pool.query(
        `INSERT INTO cvss_scores (cve_id, base_score, version) VALUES ('CVE-2020-1003', 9.8, '3.1') ON CONFLICT DO NOTHING`,
      );
      const s = await signUp(t.app, { plan: 'trial' });
      // Riskiest first: KEV, then EPSS, then CVSS (cvss-critical and epss-low tie on EPSS), then severity.
      const findings = [
        ['kev-log4shell', 'LOW', ['CVE-2021-44228']],
        ['kev-other', 'INFO', ['CVE-2099-0001']],
        ['epss-high', 'LOW', ['CVE-2020-1001']],
        ['epss-mid', 'LOW', ['CVE-2020-1002']],
        ['cvss-critical', 'LOW', ['CVE-2020-1003']],
        ['epss-low', 'LOW', ['CVE-2020-1006']],
        ['sev-critical', 'CRITICAL', []],
        ['sev-high', 'HIGH', []],
        ['sev-medium', 'MEDIUM', []],
        ['sev-low', 'LOW', []],
        ['plain', 'INFO', ['CVE-2020-1009']],
        ['plain-2', 'INFO', []],
      ] as const;
      const body = Buffer.from(
        findings
          .map(([title, severity, cveIds], i) =>
            JSON.stringify({
              title,
              severity,
              cveIds,
              description: `finding ${title}`,
              location: `src/f${i}.ts:1`,
            }),
          )
          .join('\n'),
      );
      const done = await uploadAndTriage(t, s.key, body, '?asset=app-a&triage=new', 'application/x-ndjson');
      expect(done.triage).toEqual({
        status: 'completed',
        requested: 12,
        answered: 5,
        failed: 0,
        skippedForQuota: 7,
        batchId: done.scanId,
        byPriority: expect.any(Object),
      });
      expect(Object.values(done.triage!.byPriority).reduce((a, b) => a + b, 0)).toBe(5);
      const { rows } = await t.infra.pool.query<{ title: string }>(
        `SELECT title FROM cases WHERE workspace_id = $1 AND triaged_at IS NOT NULL ORDER BY title`,
        [s.workspaceId],
      );
      expect(rows.map((r) => r.title)).toEqual([
        'cvss-critical',
        'epss-high',
        'epss-mid',
        'kev-log4shell',
        'kev-other',
      ]);
      const quota = await t.infra.pool.query<{ used: number; reserved: number }>(
        `SELECT used, reserved FROM ai_call_quota WHERE workspace_id = $1`,
        [s.workspaceId],
      );
      expect(quota.rows[0]).toEqual({ used: 5, reserved: 0 });

      // The month is spent: the next upload's new cases are all skipped, and the scan says so.
      const more = await uploadAndTriage(
        t,
        s.key,
        Buffer.from(
          JSON.stringify({ title: 'late', severity: 'HIGH', cveIds: ['CVE-2021-44228'], location: 'x:1' }),
        ),
        '?asset=app-a&triage=new',
        'application/x-ndjson',
      );
      expect(more.triage).toEqual({
        status: 'completed',
        requested: 1,
        answered: 0,
        failed: 0,
        skippedForQuota: 1,
        batchId: null,
        byPriority: {},
      });
    },
    240_000,
  );
});
