import { Migration } from '@mikro-orm/migrations';

/** Audit actions this migration adds to `key_audit_events` (docs/operations.md#end-of-life). */
const ADDED_ACTIONS = ['workspace_delete', 'retention_change'];

/**
 * A workspace's end of life and the retention of its raw scan files (docs/operations.md#end-of-life,
 * docs/operations.md#retention).
 *
 * - `workspace_deletions` is the record of a deletion that outlives the deleted data: no foreign
 *   key to `workspaces`, so removing the workspace leaves it. One per workspace.
 * - `workspaces.scan_file_retention_days`: raw scan files older than this are removed (null keeps
 *   them); `scans.file_deleted_at` says when a scan's file went.
 * - The audit CHECK gains the deletion request and retention changes. It is extended from the
 *   constraint as it stands, not rewritten from a list, so actions added by earlier migrations stay.
 */
export class M030WorkspaceEndOfLife extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE workspace_deletions (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL UNIQUE,
        workspace_name text NOT NULL,
        actor text NOT NULL,
        ip text,
        user_agent text,
        requested_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        scans_removed integer NOT NULL DEFAULT 0,
        files_removed integer NOT NULL DEFAULT 0
      )`);
    this.addSql(`
      ALTER TABLE workspaces ADD COLUMN scan_file_retention_days integer
        CONSTRAINT workspaces_scan_file_retention_days_check
        CHECK (scan_file_retention_days BETWEEN 1 AND 3650)`);
    this.addSql(`ALTER TABLE scans ADD COLUMN file_deleted_at timestamptz`);
    this.addSql(extendAuditCheck(ADDED_ACTIONS, []));
  }

  override async down(): Promise<void> {
    this.addSql(`DELETE FROM key_audit_events WHERE action IN ('workspace_delete', 'retention_change')`);
    this.addSql(extendAuditCheck([], ADDED_ACTIONS));
    this.addSql(`ALTER TABLE scans DROP COLUMN IF EXISTS file_deleted_at`);
    this.addSql(`ALTER TABLE workspaces DROP COLUMN IF EXISTS scan_file_retention_days`);
    this.addSql(`DROP TABLE IF EXISTS workspace_deletions`);
  }
}

/** Rebuilds the audit action CHECK from its current list, plus `add`, minus `remove`, in order. */
function extendAuditCheck(add: string[], remove: string[]): string {
  const literals = (xs: string[]) => `ARRAY[${xs.map((x) => `'${x}'`).join(', ')}]::text[]`;
  return `
    DO $$
    DECLARE
      current text[];
      wanted text[];
    BEGIN
      SELECT array_agg(m.a[1] ORDER BY m.n) INTO current
        FROM pg_constraint c,
             regexp_matches(pg_get_constraintdef(c.oid), '''([a-z_]+)''', 'g') WITH ORDINALITY AS m (a, n)
       WHERE c.conname = 'key_audit_events_action_check' AND c.conrelid = 'key_audit_events'::regclass;
      SELECT array_agg(x ORDER BY i) INTO wanted
        FROM unnest(current || ${add.length ? literals(add) : `ARRAY[]::text[]`}) WITH ORDINALITY AS u (x, i)
       WHERE NOT (x = ANY (${remove.length ? literals(remove) : `ARRAY[]::text[]`}))
         AND i = (SELECT min(j) FROM unnest(current || ${add.length ? literals(add) : `ARRAY[]::text[]`}) WITH ORDINALITY AS v (y, j) WHERE y = x);
      EXECUTE 'ALTER TABLE key_audit_events DROP CONSTRAINT key_audit_events_action_check';
      EXECUTE format(
        'ALTER TABLE key_audit_events ADD CONSTRAINT key_audit_events_action_check CHECK (action IN (%s))',
        (SELECT string_agg(quote_literal(w), ', ' ORDER BY k) FROM unnest(wanted) WITH ORDINALITY AS z (w, k)));
    END $$`;
}
