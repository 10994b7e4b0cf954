import type { Db, Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { recordAuditEvent } from '../keys/audit-log.js';
import type { Actor } from '../keys/key-service.js';
import { recomputeDueDates, type DueDateScope } from './case-due-dates.js';
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
 * Stores the workspace's policy and recomputes the due dates of its cases that are not resolved,
 * in one transaction (a resolved case keeps the due date it was resolved against). A policy that
 * differs from the one in force is an audit event (`sla_policy_change`, by `actor`, with the old
 * and new settings and how many due dates moved) in the same transaction. Returns the stored
 * policy and how many cases' due dates moved.
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
    const before = settingsOf(await getSlaPolicy(tx, workspaceId));
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
    const recomputed = await recomputeDueDates(tx, workspaceId, policy);
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
 * Recomputes the due dates of the workspace's cases of `scope` under its own policy: what the
 * cases area runs after a change a due date derives from (a scan's sightings, a triage answer,
 * a status change). Returns how many moved.
 */
export async function refreshDueDates(db: Db, workspaceId: string, scope: DueDateScope): Promise<number> {
  return recomputeDueDates(db, workspaceId, await getSlaPolicy(db, workspaceId), scope);
}

/**
 * Recomputes the due dates of every workspace's cases carrying any of `cves`, each under its
 * workspace's policy: a KEV catalog load whose entries (and so their due dates) changed.
 */
export async function refreshDueDatesForCves(db: Db, cves: readonly string[]): Promise<number> {
  if (cves.length === 0) return 0;
  const { rows } = await db.query<{ workspace_id: string }>(
    sql`SELECT DISTINCT workspace_id FROM cases WHERE cve_ids && ${[...cves]}::text[] AND status <> 'resolved'`,
  );
  let moved = 0;
  for (const r of rows) moved += await refreshDueDates(db, r.workspace_id, { cves: [...cves] });
  return moved;
}
