import { Migration } from '@mikro-orm/migrations';

/**
 * Workspaces, console users and sessions, API keys and their audit trail, usage and quotas.
 * Foreign keys are checked at commit (DEFERRABLE INITIALLY DEFERRED): the unit of work may
 * insert a key and its audit event in either order within one transaction.
 */
export class M001Foundation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE workspaces (
        id uuid PRIMARY KEY,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
        plan text NOT NULL CHECK (plan IN ('free', 'trial', 'service')),
        trial_ends_at timestamptz,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
        rotation_policy_days integer NOT NULL DEFAULT 90 CHECK (rotation_policy_days BETWEEN 15 AND 3650),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`
      CREATE TABLE console_users (
        id uuid PRIMARY KEY,
        email text NOT NULL,
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`CREATE UNIQUE INDEX console_users_email_key ON console_users (lower(email))`);
    this.addSql(`
      CREATE TABLE memberships (
        user_id uuid NOT NULL REFERENCES console_users (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        role text NOT NULL DEFAULT 'owner',
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, workspace_id)
      )`);
    this.addSql(`
      CREATE TABLE console_sessions (
        id uuid PRIMARY KEY,
        token_hash text NOT NULL UNIQUE,
        csrf_token text NOT NULL,
        user_id uuid NOT NULL REFERENCES console_users (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    this.addSql(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        label text NOT NULL,
        key_hash text NOT NULL UNIQUE,
        prefix text NOT NULL,
        last_four text NOT NULL,
        scopes text[] NOT NULL,
        state text NOT NULL CHECK (state IN ('active', 'rotating', 'expired', 'revoked')),
        expires_at timestamptz,
        grace_ends_at timestamptz,
        successor_id uuid REFERENCES api_keys (id) DEFERRABLE INITIALLY DEFERRED,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    this.addSql(`CREATE INDEX api_keys_workspace_idx ON api_keys (workspace_id, created_at)`);
    this.addSql(`
      CREATE TABLE key_reveals (
        token_hash text PRIMARY KEY,
        key_id uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        sealed_secret text,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        revealed_at timestamptz
      )`);
    this.addSql(`
      CREATE TABLE key_audit_events (
        id bigserial PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        key_id uuid REFERENCES api_keys (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        action text NOT NULL CHECK (action IN ('create', 'reveal', 'rotate', 'revoke', 'expire')),
        actor text NOT NULL,
        ip text,
        user_agent text,
        details jsonb NOT NULL DEFAULT '{}',
        at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`CREATE INDEX key_audit_events_ws_idx ON key_audit_events (workspace_id, at)`);
    this.addSql(`
      CREATE TABLE usage_ledger (
        id bigserial PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        key_id uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        request_id text,
        tier text NOT NULL,
        catalog_model text NOT NULL,
        provider_model text NOT NULL,
        input_tokens integer NOT NULL CHECK (input_tokens >= 0),
        output_tokens integer NOT NULL CHECK (output_tokens >= 0),
        cost_micros bigint NOT NULL CHECK (cost_micros >= 0),
        cost_picos bigint NOT NULL CHECK (cost_picos >= 0),
        ai_call boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`CREATE INDEX usage_ledger_key_idx ON usage_ledger (key_id, created_at)`);
    this.addSql(`CREATE INDEX usage_ledger_ws_idx ON usage_ledger (workspace_id, created_at)`);
    this.addSql(`
      CREATE TABLE key_request_counters (
        key_id uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        day date NOT NULL,
        requests bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (key_id, day)
      )`);
    this.addSql(`CREATE INDEX key_request_counters_ws_idx ON key_request_counters (workspace_id, day)`);
    this.addSql(`
      CREATE TABLE ai_call_quota (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        month date NOT NULL,
        used integer NOT NULL DEFAULT 0 CHECK (used >= 0),
        reserved integer NOT NULL DEFAULT 0 CHECK (reserved >= 0),
        PRIMARY KEY (workspace_id, month)
      )`);
    this.addSql(`
      CREATE TABLE quota_reservations (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL,
        month date NOT NULL,
        amount integer NOT NULL CHECK (amount > 0),
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (workspace_id, month) REFERENCES ai_call_quota (workspace_id, month) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED
      )`);
    this.addSql(`CREATE INDEX quota_reservations_expiry_idx ON quota_reservations (expires_at)`);
    this.addSql(`
      CREATE UNLOGGED TABLE rate_limit_windows (
        bucket text NOT NULL,
        window_start timestamptz NOT NULL,
        hits integer NOT NULL,
        PRIMARY KEY (bucket, window_start)
      )`);
    this.addSql(`
      CREATE TABLE plan_changes (
        id bigserial PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        from_plan text,
        to_plan text NOT NULL,
        reason text NOT NULL,
        actor text NOT NULL,
        at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  override async down(): Promise<void> {
    for (const t of [
      'plan_changes',
      'rate_limit_windows',
      'quota_reservations',
      'ai_call_quota',
      'key_request_counters',
      'usage_ledger',
      'key_audit_events',
      'key_reveals',
      'api_keys',
      'console_sessions',
      'memberships',
      'console_users',
      'workspaces',
    ]) {
      this.addSql(`DROP TABLE IF EXISTS ${t} CASCADE`);
    }
  }
}
