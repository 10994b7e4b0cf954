import { Migration } from '@mikro-orm/migrations';
import { extendAuditCheck } from './audit-check.js';

/** Audit actions this migration adds to `key_audit_events` (docs/console.md#members-and-roles). */
const ADDED_ACTIONS = [
  'invitation_create',
  'invitation_revoke',
  'invitation_accept',
  'member_remove',
  'member_role_change',
  'ownership_transfer',
  'password_reset_request',
  'password_reset',
];

/**
 * A workspace's people (docs/console.md#members-and-roles): a membership's role is one of
 * `owner`, `admin`, `member`, `viewer`; invitations (7 days, used once) and password resets
 * (30 minutes, used once) keep only the HMAC of their token; the audit log records each
 * change to who may do what. Sessions are looked up by user and workspace when a member is
 * removed or a password changes, hence their index.
 */
export class M028MembersAndRoles extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `ALTER TABLE memberships ADD CONSTRAINT memberships_role_check
         CHECK (role IN ('viewer', 'member', 'admin', 'owner'))`,
    );
    this.addSql(`CREATE INDEX memberships_workspace_idx ON memberships (workspace_id)`);
    this.addSql(`CREATE INDEX console_sessions_user_idx ON console_sessions (user_id, workspace_id)`);
    this.addSql(`
      CREATE TABLE invitations (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        email text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
        role text NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
        token_hash text NOT NULL,
        invited_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        accepted_at timestamptz,
        revoked_at timestamptz
      )`);
    this.addSql(`CREATE UNIQUE INDEX invitations_token_hash_key ON invitations (token_hash)`);
    this.addSql(`CREATE INDEX invitations_workspace_idx ON invitations (workspace_id, created_at)`);
    this.addSql(`
      CREATE TABLE password_resets (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES console_users (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        token_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      )`);
    this.addSql(`CREATE UNIQUE INDEX password_resets_token_hash_key ON password_resets (token_hash)`);
    this.addSql(`CREATE INDEX password_resets_user_idx ON password_resets (user_id)`);
    this.addSql(extendAuditCheck(ADDED_ACTIONS, []));
  }

  override async down(): Promise<void> {
    this.addSql(
      `DELETE FROM key_audit_events WHERE action IN (${ADDED_ACTIONS.map((a) => `'${a}'`).join(', ')})`,
    );
    this.addSql(extendAuditCheck([], ADDED_ACTIONS));
    this.addSql('DROP TABLE IF EXISTS password_resets');
    this.addSql('DROP TABLE IF EXISTS invitations');
    this.addSql('DROP INDEX IF EXISTS console_sessions_user_idx');
    this.addSql('DROP INDEX IF EXISTS memberships_workspace_idx');
    this.addSql(`UPDATE memberships SET role = 'owner'`);
    this.addSql('ALTER TABLE memberships DROP CONSTRAINT IF EXISTS memberships_role_check');
  }
}
