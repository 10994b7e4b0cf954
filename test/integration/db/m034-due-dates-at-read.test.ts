import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrm, type Orm } from '../../../src/db/orm.js';
import { createPool } from '../../../src/db/pool.js';
import { listCases } from '../../../src/domain/cases/case-store.js';
import { createTestDatabase } from '../../helpers/db.js';

/**
 * m034 turns stored due dates into due dates computed at read time (docs/cases.md#due-dates-and-sla):
 * a database seeded under m033's schema, with due dates as the cases area kept them, reads the
 * same due date for every case after it, keeps announced breaches announced, and its `down()`
 * stores them again.
 */
const T0 = '2026-01-01T00:00:00.000Z';
const at = (days: number) => new Date(Date.parse(T0) + days * 86_400_000).toISOString();

let db: { url: string; drop: () => Promise<void> };
let orm: Orm;
let pool: pg.Pool;
const ws: Record<'a' | 'b', string> = { a: '', b: '' };
/** Title → the due date stored under m033. */
const stored = new Map<string, string | null>();

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await createOrm(db.url, { poolMax: 2 });
  await orm.getMigrator().up({ to: 'm033-sso-session-binding' });
  pool = createPool(db.url, 2);
  for (const k of ['a', 'b'] as const) {
    ws[k] = (
      await pool.query<{ id: string }>(
        `INSERT INTO workspaces (id, name, plan) VALUES (gen_random_uuid(), $1, 'service') RETURNING id`,
        [k],
      )
    ).rows[0]!.id;
  }
  // b: CRITICAL 3 days, 1 on exposed assets; HIGH 14.
  await pool.query(
    `INSERT INTO sla_policies (workspace_id, critical_days, high_days, medium_days, low_days, exposed_critical_days)
     VALUES ($1, 3, 14, 60, 120, 1)`,
    [ws.b],
  );
  await pool.query(`INSERT INTO kev_entries (cve_id, due_date) VALUES ('CVE-2099-00001', '2026-01-04')`);
  const exposedScan = '00000000-0000-4000-8000-0000000000e1';
  await pool.query(
    `INSERT INTO scans (id, workspace_id, format, bytes, sha256, storage_path, status, asset_internet_exposed)
     VALUES ($1, $2, 'cli', 0, 'x', 'x', 'completed', true)`,
    [exposedScan, ws.b],
  );
  const seed: {
    ws: 'a' | 'b';
    title: string;
    severity: string;
    due: string | null;
    status?: string;
    kev?: boolean;
    scan?: string;
    announced?: string;
  }[] = [
    { ws: 'a', title: 'a critical', severity: 'CRITICAL', due: at(7) },
    { ws: 'a', title: 'a info', severity: 'INFO', due: null },
    // The KEV due date (end of 4 January) is sooner than 90 days.
    { ws: 'a', title: 'a medium kev', severity: 'MEDIUM', due: at(4), kev: true },
    // Resolved against an older policy: kept as it is.
    { ws: 'a', title: 'a resolved', severity: 'HIGH', due: at(2), status: 'resolved' },
    { ws: 'a', title: 'a announced', severity: 'CRITICAL', due: at(7), announced: at(7) },
    // Announced for a due date since moved: not announced for this one.
    { ws: 'a', title: 'a moved', severity: 'CRITICAL', due: at(7), announced: at(5) },
    { ws: 'b', title: 'b critical exposed', severity: 'CRITICAL', due: at(1), scan: exposedScan },
    { ws: 'b', title: 'b high', severity: 'HIGH', due: at(14) },
  ];
  for (const c of seed) {
    await pool.query(
      `INSERT INTO cases (workspace_id, fingerprint, title, severity, scanner, cve_ids, first_scan_id, last_scan_id,
                          first_seen, last_seen, sightings, status, due_at, sla_breach_due_at)
       VALUES ($1, $2, $2, $3, 'test', $4, $5, $5, $6, $6, 1, $7, $8, $9)`,
      [
        ws[c.ws],
        c.title,
        c.severity,
        c.kev ? ['CVE-2099-00001'] : [],
        c.scan ?? '00000000-0000-4000-8000-000000000000',
        T0,
        c.status ?? 'open',
        c.due,
        c.announced ?? null,
      ],
    );
    stored.set(c.title, c.due);
  }
  await orm.getMigrator().up();
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await orm?.close(true);
  await db?.drop();
});

async function dueAts(): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (const id of Object.values(ws)) {
    for (const c of (await listCases(pool, id, { limit: 50 })).data) out.set(c.title, c.dueAt);
  }
  return out;
}

describe('m034', () => {
  it('keeps every case its due date, now computed at read time', async () => {
    expect(await dueAts()).toEqual(stored);
    const { rows } = await pool.query<{ title: string }>(
      `SELECT title FROM cases WHERE due_at IS NOT NULL ORDER BY title`,
    );
    expect(rows.map((r) => r.title)).toEqual(['a resolved']);
  });

  it('keeps announced breaches announced, and forgets announcements of due dates since moved', async () => {
    const { rows } = await pool.query<{ title: string }>(
      `SELECT title FROM cases WHERE sla_breach_due_at IS NOT NULL ORDER BY title`,
    );
    expect(rows.map((r) => r.title)).toEqual(['a announced']);
  });

  it('stores the due dates again on the way down', async () => {
    await orm.getMigrator().down({ to: 'm033-sso-session-binding' });
    const { rows } = await pool.query<{ title: string; due_at: Date | null; announced: Date | null }>(
      `SELECT title, due_at, sla_breach_due_at AS announced FROM cases`,
    );
    expect(new Map(rows.map((r) => [r.title, r.due_at?.toISOString() ?? null]))).toEqual(stored);
    expect(rows.filter((r) => r.announced).map((r) => r.title)).toEqual(['a announced']);
    await orm.getMigrator().up();
    expect(await dueAts()).toEqual(stored);
  });
});
