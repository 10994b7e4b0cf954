import { Migration } from '@mikro-orm/migrations';
import { extendAuditCheck } from './audit-check.js';

/** Audit actions this migration adds to `key_audit_events` (docs/console.md#failed-sign-ins). */
const ADDED_ACTIONS = ['sso_sign_in_failed'];

/**
 * What a console session was made by, and failed SSO sign-ins in the audit log
 * (docs/console.md#sso-and-sessions).
 *
 * - `console_sessions.sign_in`: `password` (sign-up, a password, an invitation, a switch) or
 *   `sso` (its own workspace's single sign-on). A workspace that requires SSO only admits the
 *   non-owners' sessions its SSO made; every existing session was made without it.
 * - `sso_sign_ins.used_at`: a sign-in's state is marked used instead of deleted, so a replayed
 *   callback still names its workspace and is audited there; rows go a day after they expire.
 * - The audit CHECK gains `sso_sign_in_failed`, extended from the constraint as it stands.
 */
export class M033SsoSessionBinding extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      ALTER TABLE console_sessions
        ADD COLUMN sign_in text NOT NULL DEFAULT 'password' CHECK (sign_in IN ('password', 'sso'))`);
    this.addSql(`ALTER TABLE sso_sign_ins ADD COLUMN used_at timestamptz`);
    this.addSql(extendAuditCheck(ADDED_ACTIONS, []));
  }

  override async down(): Promise<void> {
    this.addSql(`DELETE FROM key_audit_events WHERE action IN ('sso_sign_in_failed')`);
    this.addSql(extendAuditCheck([], ADDED_ACTIONS));
    this.addSql(`ALTER TABLE sso_sign_ins DROP COLUMN IF EXISTS used_at`);
    this.addSql(`ALTER TABLE console_sessions DROP COLUMN IF EXISTS sign_in`);
  }
}
