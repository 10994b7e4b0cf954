import { Migration } from '@mikro-orm/migrations';
import { extendAuditCheck } from './audit-check.js';

/**
 * A case's owner and tags, and the expiry of its risk acceptance (docs/cases.md#owner-and-tags,
 * docs/cases.md#risk-acceptance); deleting a scan joins the audit log (docs/api.md#audit-log).
 *
 * - `assignee`: an email, null when nobody owns the case.
 * - `tags`: short slugs, at most 20 (checked by the API; the GIN index serves `tag=`).
 * - `acceptance_expires_at`, `acceptance_note`: the risk acceptance's end and justification, set
 *   exactly while the case is `risk_accepted` (exports carry them); the expiry sweep reads the
 *   partial index, which holds only accepted cases.
 * - `acceptance_expired`: a reason of `case_status_history.reason` (m024's column; free text).
 *
 * Every added column is nullable or has a constant default, so the ALTER rewrites no rows.
 */
export class M026CaseOwnerAcceptance extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      ALTER TABLE cases
        ADD COLUMN assignee text,
        ADD COLUMN tags text[] NOT NULL DEFAULT '{}',
        ADD COLUMN acceptance_expires_at timestamptz,
        ADD COLUMN acceptance_note text`);
    this.addSql(`CREATE INDEX cases_ws_assignee_idx ON cases (workspace_id, assignee)`);
    this.addSql(`CREATE INDEX cases_tags_idx ON cases USING gin (tags)`);
    this.addSql(
      `CREATE INDEX cases_acceptance_expiry_idx ON cases (acceptance_expires_at) WHERE status = 'risk_accepted'`,
    );
    this.addSql(extendAuditCheck(['scan_delete'], []));
  }

  override async down(): Promise<void> {
    this.addSql(`DELETE FROM key_audit_events WHERE action = 'scan_delete'`);
    this.addSql(extendAuditCheck([], ['scan_delete']));
    this.addSql(`DROP INDEX IF EXISTS cases_acceptance_expiry_idx`);
    this.addSql(`DROP INDEX IF EXISTS cases_tags_idx`);
    this.addSql(`DROP INDEX IF EXISTS cases_ws_assignee_idx`);
    this.addSql(
      `ALTER TABLE cases DROP COLUMN acceptance_note, DROP COLUMN acceptance_expires_at, DROP COLUMN tags, DROP COLUMN assignee`,
    );
  }
}
