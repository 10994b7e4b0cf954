import { Migration } from '@mikro-orm/migrations';

/**
 * Workflow changes join the audit log (docs/workflows.md#audit-log): creating, changing, enabling,
 * disabling and deleting a mapped workflow is recorded in `key_audit_events` (without a key),
 * with its actor, the workflow's id and name, and the names of the changed parts — never a
 * credential or secret.
 */
export class M018WorkflowAudit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE key_audit_events DROP CONSTRAINT IF EXISTS key_audit_events_action_check`);
    this.addSql(
      `ALTER TABLE key_audit_events ADD CONSTRAINT key_audit_events_action_check
         CHECK (action IN ('create', 'reveal', 'rotate', 'revoke', 'expire', 'plan_change',
                           'workflow_create', 'workflow_update', 'workflow_enable', 'workflow_disable',
                           'workflow_delete'))`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`DELETE FROM key_audit_events WHERE action LIKE 'workflow\\_%'`);
    this.addSql(`ALTER TABLE key_audit_events DROP CONSTRAINT IF EXISTS key_audit_events_action_check`);
    this.addSql(
      `ALTER TABLE key_audit_events ADD CONSTRAINT key_audit_events_action_check
         CHECK (action IN ('create', 'reveal', 'rotate', 'revoke', 'expire', 'plan_change'))`,
    );
  }
}
