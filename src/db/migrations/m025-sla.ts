import { Migration } from '@mikro-orm/migrations';

/**
 * Due dates (docs/cases.md#due-dates-and-sla). `sla_policies` holds a workspace's policy once it
 * set one (a workspace without a row has the defaults of `domain/cases/sla-policy-store.ts`):
 * days to fix by priority, tighter days for internet-exposed or HIGH/CRITICAL-criticality assets
 * (null: none), and the longest a risk acceptance may last.
 *
 * On `cases`: `due_at`, kept by the cases area whenever what it is computed from changes (null:
 * no due date), and `sla_breach_due_at`, the due date whose breach was last announced to the
 * workflows: a breach is announced once per (case, due date), so a due date moved later and
 * breached again is announced again, and the sweep of many processes claims each breach once.
 * Existing cases that are not resolved get their due date from the default policy here.
 */
export class M025Sla extends Migration {
  override async up(): Promise<void> {
    const days = (name: string) => `${name} integer CHECK (${name} BETWEEN 1 AND 3650)`;
    this.addSql(`
      CREATE TABLE sla_policies (
        workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        ${days('critical_days')}, ${days('high_days')}, ${days('medium_days')}, ${days('low_days')}, ${days('info_days')},
        ${days('exposed_critical_days')}, ${days('exposed_high_days')}, ${days('exposed_medium_days')},
        ${days('exposed_low_days')}, ${days('exposed_info_days')},
        max_acceptance_days integer NOT NULL DEFAULT 365 CHECK (max_acceptance_days BETWEEN 1 AND 3650),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`ALTER TABLE cases ADD COLUMN due_at timestamptz, ADD COLUMN sla_breach_due_at timestamptz`);
    this.addSql(
      `UPDATE cases c SET due_at = LEAST(
         c.first_seen + make_interval(days => CASE CASE WHEN c.triaged_at IS NULL THEN c.severity ELSE c.priority END
           WHEN 'CRITICAL' THEN 7 WHEN 'HIGH' THEN 30 WHEN 'MEDIUM' THEN 90 WHEN 'LOW' THEN 180 END),
         (SELECT (min(k.due_date) + 1)::timestamp AT TIME ZONE 'UTC' FROM kev_entries k WHERE k.cve_id = ANY(c.cve_ids)))
       WHERE c.status <> 'resolved'`,
    );
    // The `dueAt` sort's key (`domain/cases/case-sort.ts`): no due date sorts last.
    this.addSql(
      `CREATE INDEX cases_ws_due_key_idx ON cases (workspace_id, coalesce(due_at, '9999-12-31T00:00:00Z'::timestamptz), seq DESC)`,
    );
    // The breach sweep's candidates (`domain/workflows/sla-breaches.ts`): open cases with a due date
    // whose breach is not yet announced; an announced one leaves the index.
    this.addSql(
      `CREATE INDEX cases_sla_unannounced_idx ON cases (due_at)
         WHERE status IN ('open', 'in_progress') AND due_at IS NOT NULL AND sla_breach_due_at IS DISTINCT FROM due_at`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`DROP INDEX IF EXISTS cases_sla_unannounced_idx`);
    this.addSql(`DROP INDEX IF EXISTS cases_ws_due_key_idx`);
    this.addSql(`ALTER TABLE cases DROP COLUMN IF EXISTS sla_breach_due_at, DROP COLUMN IF EXISTS due_at`);
    this.addSql(`DROP TABLE IF EXISTS sla_policies`);
  }
}
