import { Migration } from '@mikro-orm/migrations';

/**
 * The audit log (docs/api.md#audit-log: key create, reveal, rotate, revoke and plan changes, each with
 * actor, time, IP and user agent) is read back by `GET /api/v1/audit-events` and Settings > Audit
 * log. Plan changes join the key events in `key_audit_events` (without a key), and the log is
 * paged newest first by id within a workspace, so it gets an index in that order.
 */
export class M009AuditPlanChanges extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE key_audit_events DROP CONSTRAINT IF EXISTS key_audit_events_action_check`);
    this.addSql(
      `ALTER TABLE key_audit_events ADD CONSTRAINT key_audit_events_action_check
         CHECK (action IN ('create', 'reveal', 'rotate', 'revoke', 'expire', 'plan_change'))`,
    );
    this.addSql(`CREATE INDEX key_audit_events_ws_id_idx ON key_audit_events (workspace_id, id DESC)`);
  }

  override async down(): Promise<void> {
    this.addSql(`DROP INDEX IF EXISTS key_audit_events_ws_id_idx`);
    this.addSql(`DELETE FROM key_audit_events WHERE action = 'plan_change'`);
    this.addSql(`ALTER TABLE key_audit_events DROP CONSTRAINT IF EXISTS key_audit_events_action_check`);
    this.addSql(
      `ALTER TABLE key_audit_events ADD CONSTRAINT key_audit_events_action_check
         CHECK (action IN ('create', 'reveal', 'rotate', 'revoke', 'expire'))`,
    );
  }
}
