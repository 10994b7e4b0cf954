import { Migration } from '@mikro-orm/migrations';

/**
 * One counter that moves whenever anything a process caches about a key or a workspace
 * changes (revoke, rotation, expiry, scopes, plan, suspension), bumped by triggers so no
 * code path can forget it. Every process reads it at most once a second and drops its key
 * cache when it moved: the net under the invalidation bus, whose messages can be lost
 * (docs/operations.md#failure-behaviour). It commits with the change itself, so a reader never sees it move early.
 * `last_used_at` is not watched: the request meter writes it every few seconds.
 */
export class M008KeyVersion extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `CREATE TABLE key_version (id smallint PRIMARY KEY CHECK (id = 1), version bigint NOT NULL DEFAULT 0)`,
    );
    this.addSql(`INSERT INTO key_version (id, version) VALUES (1, 0)`);
    this.addSql(`
      CREATE FUNCTION bump_key_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE key_version SET version = version + 1 WHERE id = 1;
        RETURN NULL;
      END $$`);
    this.addSql(`
      CREATE TRIGGER api_keys_bump_key_version
        AFTER UPDATE OF state, scopes, expires_at, grace_ends_at, successor_id, label, key_hash, workspace_id
        ON api_keys FOR EACH ROW
        WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.scopes IS DISTINCT FROM NEW.scopes
              OR OLD.expires_at IS DISTINCT FROM NEW.expires_at OR OLD.grace_ends_at IS DISTINCT FROM NEW.grace_ends_at
              OR OLD.successor_id IS DISTINCT FROM NEW.successor_id OR OLD.label IS DISTINCT FROM NEW.label
              OR OLD.key_hash IS DISTINCT FROM NEW.key_hash OR OLD.workspace_id IS DISTINCT FROM NEW.workspace_id)
        EXECUTE FUNCTION bump_key_version()`);
    this.addSql(`
      CREATE TRIGGER api_keys_deleted_bump_key_version AFTER DELETE ON api_keys
        FOR EACH STATEMENT EXECUTE FUNCTION bump_key_version()`);
    this.addSql(`
      CREATE TRIGGER workspaces_bump_key_version
        AFTER UPDATE OF name, plan, trial_ends_at, status, rotation_policy_days ON workspaces FOR EACH ROW
        WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.plan IS DISTINCT FROM NEW.plan
              OR OLD.trial_ends_at IS DISTINCT FROM NEW.trial_ends_at OR OLD.status IS DISTINCT FROM NEW.status
              OR OLD.rotation_policy_days IS DISTINCT FROM NEW.rotation_policy_days)
        EXECUTE FUNCTION bump_key_version()`);
    this.addSql(`
      CREATE TRIGGER workspaces_deleted_bump_key_version AFTER DELETE ON workspaces
        FOR EACH STATEMENT EXECUTE FUNCTION bump_key_version()`);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TRIGGER IF EXISTS api_keys_bump_key_version ON api_keys');
    this.addSql('DROP TRIGGER IF EXISTS api_keys_deleted_bump_key_version ON api_keys');
    this.addSql('DROP TRIGGER IF EXISTS workspaces_bump_key_version ON workspaces');
    this.addSql('DROP TRIGGER IF EXISTS workspaces_deleted_bump_key_version ON workspaces');
    this.addSql('DROP FUNCTION IF EXISTS bump_key_version()');
    this.addSql('DROP TABLE IF EXISTS key_version');
  }
}
