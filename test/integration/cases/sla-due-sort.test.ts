import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrm, migrate } from '../../../src/db/orm.js';
import { createPool } from '../../../src/db/pool.js';
import { listCases } from '../../../src/domain/cases/case-store.js';
import { putSlaPolicy, type SlaPolicyInput } from '../../../src/domain/cases/sla-policy-store.js';
import { createTestDatabase } from '../../helpers/db.js';

/**
 * The `dueAt` sort (docs/cases.md#lists-and-filters) over due dates computed at read time
 * (docs/cases.md#due-dates-and-sla): a mix of classes (urgency, exposure), KEV due dates,
 * resolved cases and cases without a due date pages in exactly the order of each case's due date
 * computed here from what was seeded, every case once.
 */
const OPERATOR = { actor: 'operator', ip: null, userAgent: null };
const DAY = 86_400_000;
const HOUR = 3_600_000;
const T0 = Date.parse('2026-03-01T00:00:00Z');
const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;
const POLICY: SlaPolicyInput = {
  days: { CRITICAL: 3, HIGH: 14, MEDIUM: 60, LOW: 120, INFO: null },
  exposedDays: { CRITICAL: 1, HIGH: 20, MEDIUM: null, LOW: 30, INFO: 10 },
  maxAcceptanceDays: 365,
};
const KEV_DAY = '2026-03-05';

let db: { url: string; drop: () => Promise<void> };
let pool: pg.Pool;
let ws: string;
/** Each seeded case's expected key (ms; Infinity: no due date) and sequence. */
const expected = new Map<string, { key: number; seq: number }>();

function expectedDue(c: {
  urgency: (typeof SEVERITIES)[number];
  exposed: boolean;
  firstSeen: number;
  kev: boolean;
}): number {
  const d = POLICY.days[c.urgency];
  const e = c.exposed ? POLICY.exposedDays[c.urgency] : null;
  const days = d === null ? e : e === null ? d : Math.min(d, e);
  const classDue = days === null ? Infinity : c.firstSeen + days * DAY;
  const kevDue = c.kev ? Date.parse(`${KEV_DAY}T00:00:00Z`) + DAY : Infinity;
  return Math.min(classDue, kevDue);
}

beforeAll(async () => {
  db = await createTestDatabase();
  const orm = await createOrm(db.url, { poolMax: 2 });
  await migrate(orm, db.url);
  await orm.close(true);
  pool = createPool(db.url, 4);
  ws = (
    await pool.query<{ id: string }>(
      `INSERT INTO workspaces (id, name, plan) VALUES (gen_random_uuid(), 'due sort', 'service') RETURNING id`,
    )
  ).rows[0]!.id;
  await pool.query(`INSERT INTO kev_entries (cve_id, due_date) VALUES ('CVE-2099-00001', $1)`, [KEV_DAY]);
  await putSlaPolicy(pool, ws, POLICY, OPERATOR);
  for (let i = 0; i < 120; i++) {
    const severity = SEVERITIES[i % 5]!;
    const triaged = i % 3 === 0 ? SEVERITIES[(i + 1) % 5]! : null;
    const exposed = i % 4 === 0;
    const kev = i % 11 === 0;
    // Few distinct first sightings, so many cases share a due date and the tie-break shows.
    const firstSeen = T0 + (i % 7) * 12 * HOUR;
    const { rows } = await pool.query<{ id: string; seq: string }>(
      `INSERT INTO cases (workspace_id, fingerprint, title, severity, scanner, cve_ids, first_scan_id, last_scan_id,
                          first_seen, last_seen, sightings, sla_exposed, kev_due_at, priority, priority_rank,
                          recommended_action, reasoning, confidence_score, model, triaged_at, policy_version, triaged_kev)
       VALUES ($1, $2, $2, $3, 'test', $4, gen_random_uuid(), gen_random_uuid(), $5, $5, 1, $6, $7,
               $8, $9, $10, $11, $12, $13, $14, $15, $16)
       RETURNING id, seq`,
      [
        ws,
        `case-${i}`,
        severity,
        kev ? ['CVE-2099-00001'] : [],
        new Date(firstSeen),
        exposed,
        kev ? new Date(Date.parse(`${KEV_DAY}T00:00:00Z`) + DAY) : null,
        triaged,
        triaged ? SEVERITIES.indexOf(triaged) : 5,
        triaged ? 'MONITOR' : null,
        triaged ? 'test' : null,
        triaged ? 0.5 : null,
        triaged ? 'local:test' : null,
        triaged ? new Date(T0) : null,
        triaged ? '1' : null,
        triaged ? false : null,
      ],
    );
    const key = expectedDue({ urgency: triaged ?? severity, exposed, firstSeen, kev });
    expected.set(rows[0]!.id, { key, seq: Number(rows[0]!.seq) });
  }
  // A resolved case keeps the due date it was resolved against, whatever the policy says later.
  const { rows: resolved } = await pool.query<{ id: string }>(
    `UPDATE cases SET status = 'resolved' WHERE workspace_id = $1 AND title LIKE 'case-%5' RETURNING id`,
    [ws],
  );
  await putSlaPolicy(pool, ws, { ...POLICY, days: { ...POLICY.days, HIGH: 200, MEDIUM: 200 } }, OPERATOR);
  const frozen = new Set(resolved.map((r) => r.id));
  expect(frozen.size).toBeGreaterThan(5);
  for (const [id, e] of expected) {
    if (frozen.has(id)) continue;
    const { rows } = await pool.query<{
      severity: (typeof SEVERITIES)[number];
      priority: (typeof SEVERITIES)[number] | null;
      sla_exposed: boolean;
      first_seen: Date;
      kev: boolean;
    }>(
      `SELECT severity, priority, sla_exposed, first_seen, kev_due_at IS NOT NULL AS kev FROM cases WHERE id = $1`,
      [id],
    );
    const r = rows[0]!;
    const urgency = r.priority ?? r.severity;
    const days = { ...POLICY.days, HIGH: 200, MEDIUM: 200 }[urgency];
    const ex = r.sla_exposed ? POLICY.exposedDays[urgency] : null;
    const d = days === null ? ex : ex === null ? days : Math.min(days, ex);
    const classDue = d === null ? Infinity : r.first_seen.getTime() + d * DAY;
    const kevDue = r.kev ? Date.parse(`${KEV_DAY}T00:00:00Z`) + DAY : Infinity;
    e.key = Math.min(classDue, kevDue);
  }
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** Every case through the `dueAt` sort, `limit` a page. */
async function allPages(limit: number, filters: { status?: string[] } = {}): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 1000; n++) {
    const page = await listCases(pool, ws, { limit, sort: 'dueAt', cursor, ...filters });
    ids.push(...page.data.map((c) => c.id));
    if (!page.nextCursor) return ids;
    cursor = page.nextCursor;
  }
  throw new Error('the pages never end');
}

const byKey = (ids: Iterable<string>) =>
  [...ids].sort((a, b) => {
    const x = expected.get(a)!;
    const y = expected.get(b)!;
    return (x.key === y.key ? 0 : x.key < y.key ? -1 : 1) || y.seq - x.seq;
  });

describe('the dueAt sort over computed due dates', () => {
  it('pages through classes, KEV, resolved and undated cases in due-date order, each once', async () => {
    for (const limit of [1, 7, 50, 200]) {
      expect(await allPages(limit), `pages of ${limit}`).toEqual(byKey(expected.keys()));
    }
  });

  it('answers each case the due date its order uses', async () => {
    const page = await listCases(pool, ws, { limit: 200, sort: 'dueAt' });
    for (const c of page.data) {
      const key = expected.get(c.id)!.key;
      expect(c.dueAt === null ? Infinity : Date.parse(c.dueAt), c.title).toBe(key);
    }
  });

  it('reads only the walks a status filter can match', async () => {
    const resolved = await allPages(4, { status: ['resolved'] });
    const { rows } = await pool.query<{ id: string }>(
      `SELECT id FROM cases WHERE workspace_id = $1 AND status = 'resolved'`,
      [ws],
    );
    expect(resolved).toEqual(byKey(rows.map((r) => r.id)));
    const open = await allPages(9, { status: ['open'] });
    expect(open).toEqual(byKey([...expected.keys()].filter((id) => !resolved.includes(id))));
  });
});
