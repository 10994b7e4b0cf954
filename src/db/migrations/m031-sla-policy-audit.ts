import { Migration } from '@mikro-orm/migrations';
import { extendAuditCheck } from './audit-check.js';

/** Audit actions this migration adds to `key_audit_events` (docs/cases.md#due-dates-and-sla). */
const ADDED_ACTIONS = ['sla_policy_change'];

/**
 * A change of a workspace's SLA policy is an audit event (docs/cases.md#due-dates-and-sla): it moves
 * the due date of every open case. The audit CHECK is extended from the constraint as it stands,
 * so actions added by earlier migrations stay.
 */
export class M031SlaPolicyAudit extends Migration {
  override async up(): Promise<void> {
    this.addSql(extendAuditCheck(ADDED_ACTIONS, []));
  }

  override async down(): Promise<void> {
    this.addSql(`DELETE FROM key_audit_events WHERE action IN ('sla_policy_change')`);
    this.addSql(extendAuditCheck([], ADDED_ACTIONS));
  }
}
