import type { Db, Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { recordAuditEvent } from '../keys/audit-log.js';
import type { Actor } from '../keys/key-service.js';
import {
  announcementAfterSql,
  basisOf,
  classDays,
  kevDueSql,
  openDueLookupSql,
  openDueSql,
  SLA_CLASSES,
} from './case-due-dates.js';
import {
  DEFAULT_SLA_POLICY,
  SLA_PRIORITIES,
  type SlaDays,
  type SlaPriority,
  type SlaPolicy,
  type SlaPolicyInput,
} from './sla-policy.js';

export {
  DEFAULT_SLA_POLICY,
  SLA_DAYS_MAX,
  SLA_PRIORITIES,
  type SlaDays,
  type SlaPolicy,
  type SlaPolicyInput,
} from './sla-policy.js';

/**
 * A workspace's SLA policy (docs/cases.md#due-dates-and-sla), the `sla_policies` table (m025): days
 * to fix a case by its priority (by its severity while untriaged), tighter days for cases on
 * internet-exposed or HIGH/CRITICAL-criticality assets, and the longest a risk acceptance may
 * last. A workspace that never set one has {@link DEFAULT_SLA_POLICY} (and no row).
 */

type Row = Record<string, number | null> & { max_acceptance_days: number; updated_at: Date };

const column = (p: SlaPriority, exposed: boolean) => `${exposed ? 'exposed_' : ''}${p.toLowerCase()}_days`;

function daysOf(r: Row, exposed: boolean): SlaDays {
  return Object.fromEntries(SLA_PRIORITIES.map((p) => [p, r[column(p, exposed)] ?? null])) as SlaDays;
}

/** The workspace's policy, or the defaults when it never set one. */
export async function getSlaPolicy(db: Db, workspaceId: string): Promise<SlaPolicy> {
  const { rows } = await db.query<Row>(sql`SELECT * FROM sla_policies WHERE workspace_id = ${workspaceId}`);
  const r = rows[0];
  if (!r) return DEFAULT_SLA_POLICY;
  return {
    days: daysOf(r, false),
    exposedDays: daysOf(r, true),
    maxAcceptanceDays: r.max_acceptance_days,
    updatedAt: r.updated_at.toISOString(),
  };
}

/** The parts of a policy a change of it is told by (its audit event's `from` and `to`). */
const settingsOf = (p: SlaPolicy | SlaPolicyInput): SlaPolicyInput => ({
  days: p.days,
  exposedDays: p.exposedDays,
  maxAcceptanceDays: p.maxAcceptanceDays,
});

/**
 * What a policy change does to the workspace's cases: counts the cases not resolved whose due
 * date moved (due dates are computed at read time, so none is written), and clears the
 * announcement of the breaches among them whose due date moved later, so the new date passing is
 * a new breach (docs/cases.md#due-dates-and-sla). Only the classes (urgency, exposure) whose days
 * changed are read; the same policy again reads none. Returns the count.
 */
async function policyChanged(db: Db, workspaceId: string, from: SlaPolicy, to: SlaPolicy): Promise<number> {
  const changed = SLA_CLASSES.filter(
    ({ urgency, exposed }) => classDays(from, urgency, exposed) !== classDays(to, urgency, exposed),
  );
  if (changed.length === 0) return 0;
  const c = basisOf(sql`c`);
  const inChanged = sql`(${c.urgency}, c.sla_exposed) IN (${sql.join(
    changed.map(({ urgency, exposed }) => sql`(${urgency}::text, ${exposed}::boolean)`),
  )})`;
  // A data-modifying WITH runs to completion whether or not the query reads it.
  const { rows } = await db.query<{ moved: number }>(sql`
WITH cleared AS (
  UPDATE cases c SET sla_breach_due_at = NULL
  WHERE c.workspace_id = ${workspaceId} AND c.status <> 'resolved' AND c.sla_breach_due_at IS NOT NULL
    AND ${inChanged} AND ${openDueSql(c, to)} > c.sla_breach_due_at
  RETURNING 1
)
SELECT count(*)::int AS moved FROM cases c
WHERE c.workspace_id = ${workspaceId} AND c.status <> 'resolved' AND ${inChanged}
  AND ${openDueSql(c, from)} IS DISTINCT FROM ${openDueSql(c, to)}`);
  return rows[0]!.moved;
}

/**
 * Stores the workspace's policy, in one transaction with what {@link policyChanged} does (a
 * resolved case keeps the due date it was resolved against). A policy that differs from the one
 * in force is an audit event (`sla_policy_change`, by `actor`, with the old and new settings and
 * how many due dates moved) in the same transaction. Returns the stored policy and how many open
 * cases' due dates moved (`recomputed`).
 */
export async function putSlaPolicy(
  pool: Pool,
  workspaceId: string,
  input: SlaPolicyInput,
  actor: Actor,
): Promise<{ policy: SlaPolicy; recomputed: number }> {
  const d = input.days;
  const e = input.exposedDays;
  return withTransaction(pool, async (tx) => {
    // The row is locked so two concurrent changes each audit the policy the other left.
    await tx.query(sql`SELECT 1 FROM sla_policies WHERE workspace_id = ${workspaceId} FOR UPDATE`);
    const previous = await getSlaPolicy(tx, workspaceId);
    const before = settingsOf(previous);
    await tx.query(sql`
INSERT INTO sla_policies (workspace_id, critical_days, high_days, medium_days, low_days, info_days,
  exposed_critical_days, exposed_high_days, exposed_medium_days, exposed_low_days, exposed_info_days,
  max_acceptance_days, updated_at)
VALUES (${workspaceId}, ${d.CRITICAL}, ${d.HIGH}, ${d.MEDIUM}, ${d.LOW}, ${d.INFO},
  ${e.CRITICAL}, ${e.HIGH}, ${e.MEDIUM}, ${e.LOW}, ${e.INFO}, ${input.maxAcceptanceDays}, now())
ON CONFLICT (workspace_id) DO UPDATE SET critical_days = EXCLUDED.critical_days, high_days = EXCLUDED.high_days,
  medium_days = EXCLUDED.medium_days, low_days = EXCLUDED.low_days, info_days = EXCLUDED.info_days,
  exposed_critical_days = EXCLUDED.exposed_critical_days, exposed_high_days = EXCLUDED.exposed_high_days,
  exposed_medium_days = EXCLUDED.exposed_medium_days, exposed_low_days = EXCLUDED.exposed_low_days,
  exposed_info_days = EXCLUDED.exposed_info_days, max_acceptance_days = EXCLUDED.max_acceptance_days,
  updated_at = now()`);
    const policy = await getSlaPolicy(tx, workspaceId);
    const recomputed = await policyChanged(tx, workspaceId, previous, policy);
    const after = settingsOf(policy);
    if (JSON.stringify(before) !== JSON.stringify(after)) {
      await recordAuditEvent(tx, workspaceId, 'sla_policy_change', actor, {
        from: before,
        to: after,
        recomputed,
      });
    }
    return { policy, recomputed };
  });
}

/**
 * Keeps `cases.kev_due_at` (the earliest KEV due date of a case's CVEs) of every case carrying
 * any of `cves`: a KEV catalog load whose entries changed (docs/cases.md#due-dates-and-sla). An
 * announced breach whose due date moves later becomes a new breach when the new date passes.
 * Returns how many cases' KEV due date changed.
 */
export async function refreshKevDueDates(db: Db, cves: readonly string[]): Promise<number> {
  if (cves.length === 0) return 0;
  const res = await db.query(sql`
UPDATE cases c SET kev_due_at = n.kev_due_at,
  sla_breach_due_at = CASE WHEN c.status = 'resolved' THEN c.sla_breach_due_at ELSE ${announcementAfterSql(
    sql`c.sla_breach_due_at`,
    openDueLookupSql({ ...basisOf(sql`c`), kevDueAt: sql`n.kev_due_at` }, sql`c.workspace_id`),
  )} END
FROM (SELECT c.id, ${kevDueSql(sql`c.cve_ids`)} AS kev_due_at FROM cases c
      WHERE c.cve_ids && ${[...cves]}::text[]) n
WHERE c.id = n.id AND c.kev_due_at IS DISTINCT FROM n.kev_due_at`);
  return res.rowCount ?? 0;
}
