import { Migration } from '@mikro-orm/migrations';
import { extendAuditCheck } from './audit-check.js';

/** Audit actions this migration adds to `key_audit_events`. */
const ADDED_ACTIONS = ['sso_update', 'sso_sign_in'];

/**
 * Single sign-on with OpenID Connect per workspace (docs/console.md#single-sign-on).
 *
 * - `workspace_sso`: one identity provider per workspace. `slug` is what a person types on the
 *   sign-in page; the client secret is sealed with a key derived from KEY_PEPPER, bound to the
 *   workspace's id, and never leaves the service. `group_roles` maps values of the ID token's
 *   groups claim to roles (never `owner`: ownership only moves by transfer).
 * - `workspace_sso_domains`: the email domains that find a workspace's provider from an address
 *   and, with `auto_join`, let a person of that domain join. A domain belongs to one workspace.
 * - `sso_sign_ins`: a sign-in in flight, from the redirect to the provider until its callback:
 *   the state (as its hash, the row's key), the nonce and PKCE verifier, and the hash of the
 *   browser cookie that started it. The callback deletes the row as it reads it, so a state
 *   works once.
 * - Audit actions `sso_update` (settings changed) and `sso_sign_in`.
 */
export class M029WorkspaceSso extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE workspace_sso (
        workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
        issuer text NOT NULL CHECK (length(issuer) BETWEEN 1 AND 2048),
        client_id text NOT NULL CHECK (length(client_id) BETWEEN 1 AND 512),
        client_secret_sealed text,
        enabled boolean NOT NULL DEFAULT false,
        sso_required boolean NOT NULL DEFAULT false,
        auto_join boolean NOT NULL DEFAULT false,
        default_role text NOT NULL DEFAULT 'member' CHECK (default_role IN ('admin', 'member', 'viewer')),
        groups_claim text NOT NULL DEFAULT 'groups',
        group_roles jsonb NOT NULL DEFAULT '{}',
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`
      CREATE TABLE workspace_sso_domains (
        domain text PRIMARY KEY CHECK (domain = lower(domain)),
        workspace_id uuid NOT NULL REFERENCES workspace_sso (workspace_id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED
      )`);
    this.addSql(`CREATE INDEX workspace_sso_domains_ws_idx ON workspace_sso_domains (workspace_id)`);
    this.addSql(`
      CREATE TABLE sso_sign_ins (
        state_hash text PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        browser_hash text NOT NULL,
        nonce text NOT NULL,
        code_verifier text NOT NULL,
        expires_at timestamptz NOT NULL
      )`);
    this.addSql(`CREATE INDEX sso_sign_ins_expires_idx ON sso_sign_ins (expires_at)`);
    this.addSql(extendAuditCheck(ADDED_ACTIONS, []));
  }

  override async down(): Promise<void> {
    this.addSql(`DELETE FROM key_audit_events WHERE action IN ('sso_update', 'sso_sign_in')`);
    this.addSql(extendAuditCheck([], ADDED_ACTIONS));
    this.addSql('DROP TABLE IF EXISTS sso_sign_ins');
    this.addSql('DROP TABLE IF EXISTS workspace_sso_domains');
    this.addSql('DROP TABLE IF EXISTS workspace_sso');
  }
}
