import { Migration } from '@mikro-orm/migrations';
import { extendAuditCheck } from './audit-check.js';

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
