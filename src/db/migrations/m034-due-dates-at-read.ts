import { Migration } from '@mikro-orm/migrations';

/**
 * Due dates computed at read time (docs/cases.md#due-dates-and-sla), so a policy change writes
 * its policy row instead of every case.
 *
 * - The basis on `cases`: `kev_due_at` (the earliest CISA KEV due date of its CVEs, end of that
 *   UTC day) and `sla_exposed` (its newest scan described an internet-exposed or HIGH/CRITICAL
 *   asset), kept where they change (a sighting, a KEV load). With the urgency (priority, severity
 *   while untriaged) and `first_seen`, they and the workspace's policy give an open case's due date.
 * - `due_at` is kept for resolved cases only: the due date a case was resolved against, frozen by
 *   the trigger below whichever path resolves it, and cleared when it is reopened.
 * - `sla_breach_due_at` set means the breach was announced (the due date announced); a change that
 *   moves the due date later clears it, so the new date passing is a new breach. Before, a breach
 *   was announced while it differed from `due_at`: those that differ here were never announced.
 * - Indexes: the `dueAt` sort walks one index per (urgency, exposure) class (within a class the
 *   due date is `first_seen` plus a constant), the KEV due dates and the resolved cases' due dates;
 *   the breach sweep walks the unannounced open cases by class and by KEV due date.
 *
 * The trigger's defaults are those of a workspace without a policy row
 * (`DEFAULT_SLA_POLICY` of `domain/cases/sla-policy.ts`).
 */
const URGENCY = `(CASE WHEN triaged_at IS NULL THEN severity ELSE priority END)`;
const DAYS = (prefix: string, row: string) =>
  `CASE u ${['critical', 'high', 'medium', 'low', 'info']
    .map((p) => `WHEN '${p.toUpperCase()}' THEN ${row}.${prefix}${p}_days`)
    .join(' ')} END`;

/** The due date of `NEW` (a row of `cases`) under its workspace's policy, into `due`. */
const DUE_OF_NEW = `
  SELECT ${DAYS('', 'p')}, ${DAYS('exposed_', 'p')} INTO d, e FROM sla_policies p WHERE p.workspace_id = NEW.workspace_id;
  IF NOT FOUND THEN
    d := CASE u WHEN 'CRITICAL' THEN 7 WHEN 'HIGH' THEN 30 WHEN 'MEDIUM' THEN 90 WHEN 'LOW' THEN 180 END;
    e := NULL;
  END IF;
  due := LEAST(NEW.first_seen + make_interval(days => CASE WHEN NEW.sla_exposed THEN LEAST(d, e) ELSE d END),
               NEW.kev_due_at);`;

export class M034DueDatesAtRead extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `ALTER TABLE cases ADD COLUMN kev_due_at timestamptz, ADD COLUMN sla_exposed boolean NOT NULL DEFAULT false`,
    );
    this.addSql(
      `UPDATE cases c SET sla_exposed = true FROM scans s
        WHERE s.id = c.last_scan_id AND (s.asset_internet_exposed OR s.asset_criticality IN ('HIGH', 'CRITICAL'))`,
    );
    this.addSql(
      `UPDATE cases c SET kev_due_at = (SELECT (min(k.due_date) + 1)::timestamp AT TIME ZONE 'UTC'
         FROM kev_entries k WHERE k.cve_id = ANY(c.cve_ids))
        WHERE c.cve_ids && (SELECT coalesce(array_agg(cve_id), '{}') FROM kev_entries)`,
    );
    this.addSql(
      `UPDATE cases SET sla_breach_due_at = NULL
        WHERE status <> 'resolved' AND sla_breach_due_at IS NOT NULL AND sla_breach_due_at IS DISTINCT FROM due_at`,
    );
    this.addSql(`UPDATE cases SET due_at = NULL WHERE status <> 'resolved' AND due_at IS NOT NULL`);
    this.addSql(`DROP INDEX IF EXISTS cases_ws_due_key_idx`);
    this.addSql(`DROP INDEX IF EXISTS cases_sla_unannounced_idx`);
    this.addSql(
      `CREATE INDEX cases_due_class_idx ON cases (workspace_id, ${URGENCY}, sla_exposed, first_seen, seq DESC)
         WHERE status <> 'resolved'`,
    );
    this.addSql(
      `CREATE INDEX cases_due_kev_idx ON cases (workspace_id, kev_due_at, seq DESC)
         WHERE status <> 'resolved' AND kev_due_at IS NOT NULL`,
    );
    this.addSql(
      `CREATE INDEX cases_due_resolved_idx ON cases (workspace_id, due_at, seq DESC)
         WHERE status = 'resolved' AND due_at IS NOT NULL`,
    );
    this.addSql(
      `CREATE INDEX cases_sla_unannounced_class_idx ON cases (workspace_id, ${URGENCY}, sla_exposed, first_seen)
         WHERE status IN ('open', 'in_progress') AND sla_breach_due_at IS NULL`,
    );
    this.addSql(
      `CREATE INDEX cases_sla_unannounced_kev_idx ON cases (kev_due_at)
         WHERE status IN ('open', 'in_progress') AND sla_breach_due_at IS NULL AND kev_due_at IS NOT NULL`,
    );
    // Resolving freezes the due date; reopening clears it, and a due date that is now later than
    // the breach announced makes its passing a new breach.
    this.addSql(`
      CREATE FUNCTION cases_due_at_on_status() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        u text := CASE WHEN NEW.triaged_at IS NULL THEN NEW.severity ELSE NEW.priority END;
        d integer;
        e integer;
        due timestamptz;
      BEGIN
        ${DUE_OF_NEW}
        IF NEW.status = 'resolved' THEN
          NEW.due_at := due;
        ELSE
          NEW.due_at := NULL;
          IF NEW.sla_breach_due_at IS NOT NULL AND due > NEW.sla_breach_due_at THEN
            NEW.sla_breach_due_at := NULL;
          END IF;
        END IF;
        RETURN NEW;
      END $$`);
    this.addSql(`
      CREATE TRIGGER cases_due_at_on_status BEFORE UPDATE OF status ON cases FOR EACH ROW
        WHEN (OLD.status IS DISTINCT FROM NEW.status AND (OLD.status = 'resolved' OR NEW.status = 'resolved'))
        EXECUTE FUNCTION cases_due_at_on_status()`);
  }

  override async down(): Promise<void> {
    this.addSql(`DROP TRIGGER IF EXISTS cases_due_at_on_status ON cases`);
    this.addSql(`DROP FUNCTION IF EXISTS cases_due_at_on_status()`);
    const policyDays = (prefix: string) =>
      `CASE ${URGENCY.replaceAll(/\b(triaged_at|severity|priority)\b/g, 'c.$1')} ${[
        'critical',
        'high',
        'medium',
        'low',
        'info',
      ]
        .map((p) => `WHEN '${p.toUpperCase()}' THEN p.${prefix}${p}_days`)
        .join(' ')} END`;
    const defaults = `CASE ${URGENCY.replaceAll(/\b(triaged_at|severity|priority)\b/g, 'c.$1')}
        WHEN 'CRITICAL' THEN 7 WHEN 'HIGH' THEN 30 WHEN 'MEDIUM' THEN 90 WHEN 'LOW' THEN 180 END`;
    this.addSql(
      `UPDATE cases c SET due_at = (SELECT LEAST(c.first_seen + make_interval(days =>
          CASE WHEN p.workspace_id IS NULL THEN ${defaults}
               WHEN c.sla_exposed THEN LEAST(${policyDays('')}, ${policyDays('exposed_')})
               ELSE ${policyDays('')} END), c.kev_due_at)
         FROM (SELECT) one LEFT JOIN sla_policies p ON p.workspace_id = c.workspace_id)
        WHERE c.status <> 'resolved'`,
    );
    // An announced breach was one whose announced date equals the due date.
    this.addSql(
      `UPDATE cases SET sla_breach_due_at = due_at
        WHERE status <> 'resolved' AND sla_breach_due_at IS NOT NULL AND due_at IS NOT NULL`,
    );
    this.addSql(`DROP INDEX IF EXISTS cases_sla_unannounced_kev_idx`);
    this.addSql(`DROP INDEX IF EXISTS cases_sla_unannounced_class_idx`);
    this.addSql(`DROP INDEX IF EXISTS cases_due_resolved_idx`);
    this.addSql(`DROP INDEX IF EXISTS cases_due_kev_idx`);
    this.addSql(`DROP INDEX IF EXISTS cases_due_class_idx`);
    this.addSql(
      `CREATE INDEX cases_ws_due_key_idx ON cases (workspace_id, coalesce(due_at, '9999-12-31T00:00:00Z'::timestamptz), seq DESC)`,
    );
    this.addSql(
      `CREATE INDEX cases_sla_unannounced_idx ON cases (due_at)
         WHERE status IN ('open', 'in_progress') AND due_at IS NOT NULL AND sla_breach_due_at IS DISTINCT FROM due_at`,
    );
    this.addSql(`ALTER TABLE cases DROP COLUMN IF EXISTS sla_exposed, DROP COLUMN IF EXISTS kev_due_at`);
  }
}
