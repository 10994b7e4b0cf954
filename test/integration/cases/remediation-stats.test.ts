import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { DAY } from '../../helpers/clock.js';

/**
 * The dashboard's remediation figures (docs/console.md#dashboard): past due, mean time to
 * remediate by severity over 30 and 90 days from the status history, SLA compliance, and cases
 * resolved by rescans (actor `scan:<id>`, reason `not_seen`).
 */
let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
const now = Date.now();
const X = now - 50 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();

async function upload(key: string): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/pipeline/scan?format=cli',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify({
      tool: { name: 'mttr', version: '1' },
      findings: ['critical', 'high', 'low', 'critical2', 'medium'].map((title, i) => ({
        title,
        severity: title.replace('2', ''),
        asset: 'h1',
        ruleId: `R${i}`,
      })),
    }),
  });
  expect(res.statusCode, res.body).toBe(202);
  await waitForScan(t.app, key, (res.json() as { scanId: string }).scanId);
}

/**
 * Sets a case's first sighting (its due date is that plus its severity's default days) and
 * resolves it at `resolvedAt` by `actor`.
 */
async function shape(
  title: string,
  firstSeen: number,
  resolved?: { at: number; actor: string; reason: string | null },
): Promise<void> {
  const pool = t.infra.pool;
  const { rows } = await pool.query<{ id: string }>(
    `UPDATE cases SET first_seen = $3 ${resolved ? `, status = 'resolved'` : ''}
      WHERE workspace_id = $1 AND title = $2 RETURNING id`,
    [owner.workspaceId, title, iso(firstSeen)],
  );
  if (resolved) {
    await pool.query(
      `INSERT INTO case_status_history (case_id, from_status, to_status, actor, reason, at)
       VALUES ($1, 'open', 'resolved', $2, $3, $4)`,
      [rows[0]!.id, resolved.actor, resolved.reason, iso(resolved.at)],
    );
  }
}

beforeAll(async () => {
  t = await startScanApp();
  owner = await signUp(t.app);
  other = await signUp(t.app);
  await upload(owner.key);
  await upload(other.key);
  t.clock.set(new Date(now));
  await shape('critical', X, { at: X + 3 * DAY, actor: 'user:u', reason: null });
  await shape('high', X, { at: X + 40 * DAY, actor: 'user:u', reason: null });
  await shape('low', X, {
    at: now - 5 * DAY,
    actor: 'scan:00000000-0000-4000-8000-000000000001',
    reason: 'not_seen',
  });
  await shape('critical2', X);
  await shape('medium', X);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe('the dashboard remediation figures', () => {
  it('come from due dates and the status history, for the workspace alone', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/console/dashboard',
      headers: { cookie: owner.cookie },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().remediation).toEqual({
      pastDue: 1,
      meanDaysToRemediate: {
        days30: { CRITICAL: null, HIGH: 40, MEDIUM: null, LOW: 45, INFO: null },
        days90: { CRITICAL: 3, HIGH: 40, MEDIUM: null, LOW: 45, INFO: null },
      },
      slaCompliance: { met: 2, missed: 1, rate: 0.667 },
      resolvedByRescans: { days30: 1, days90: 1 },
    });
    const theirs = await t.app.inject({
      method: 'GET',
      url: '/api/console/dashboard',
      headers: { cookie: other.cookie },
    });
    expect(theirs.json().remediation).toMatchObject({
      pastDue: 0,
      slaCompliance: { met: 0, missed: 0, rate: null },
      resolvedByRescans: { days30: 0, days90: 0 },
    });
  });

  it('are drawn on the dashboard page', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/', headers: { cookie: owner.cookie } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/id="past-due"\s*>1</);
    expect(page.body).toMatch(/id="sla-compliance"\s*>66\.7%</);
    expect(page.body).toMatch(/id="resolved-by-rescans"\s*>1</);
  });
});
