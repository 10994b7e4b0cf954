import { Migration } from '@mikro-orm/migrations';

/**
 * A rescan resolves what it no longer sees, within its scope (docs/ingestion.md#rescans):
 *
 * - `cases.scope`: the scope that last sighted the case — its scanner and its host, or for a
 *   finding without a host the upload's asset or the file's subject (JSON `[scanner, where]`);
 *   NULL when none can be named (such a case is never resolved by a rescan). Existing cases get
 *   theirs from their columns: a host, or the asset their last scan's upload named.
 * - `cases_ws_scope_open_idx`: the open and in-progress cases of one scope, which a completing
 *   scan resolves when it did not sight them.
 * - `scans.resolve_missing` (the upload's `resolveMissing`, on by default) and the counters
 *   `resolved_cases` and `reopened_cases`.
 * - `case_status_history.reason`: why the service itself changed a status (`not_seen`).
 */
export class M024RescanResolution extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE cases ADD COLUMN scope text`);
    this.addSql(`
      UPDATE cases c SET scope = json_build_array(lower(trim(c.scanner)),
        CASE WHEN nullif(trim(c.ip), '') IS NOT NULL THEN 'ip:' || lower(trim(c.ip))
             WHEN nullif(trim(c.fqdn), '') IS NOT NULL THEN 'host:' || lower(trim(c.fqdn))
             WHEN nullif(trim(c.host), '') IS NOT NULL THEN 'host:' || lower(trim(c.host))
             ELSE 'asset:' || c.asset END)::text
      WHERE nullif(trim(c.ip), '') IS NOT NULL OR nullif(trim(c.fqdn), '') IS NOT NULL
         OR nullif(trim(c.host), '') IS NOT NULL
         OR EXISTS (SELECT 1 FROM scans s WHERE s.id = c.last_scan_id AND s.asset_name = c.asset)`);
    this.addSql(
      `CREATE INDEX cases_ws_scope_open_idx ON cases (workspace_id, scope)
         WHERE status IN ('open', 'in_progress') AND scope IS NOT NULL`,
    );
    this.addSql(`
      ALTER TABLE scans
        ADD COLUMN resolve_missing boolean NOT NULL DEFAULT true,
        ADD COLUMN resolved_cases integer NOT NULL DEFAULT 0,
        ADD COLUMN reopened_cases integer NOT NULL DEFAULT 0`);
    this.addSql(`ALTER TABLE case_status_history ADD COLUMN IF NOT EXISTS reason text`);
  }

  override async down(): Promise<void> {
    this.addSql(`ALTER TABLE case_status_history DROP COLUMN IF EXISTS reason`);
    this.addSql(
      `ALTER TABLE scans DROP COLUMN reopened_cases, DROP COLUMN resolved_cases, DROP COLUMN resolve_missing`,
    );
    this.addSql(`DROP INDEX IF EXISTS cases_ws_scope_open_idx`);
    this.addSql(`ALTER TABLE cases DROP COLUMN scope`);
  }
}
