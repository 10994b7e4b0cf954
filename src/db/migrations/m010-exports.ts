import { Migration } from '@mikro-orm/migrations';

/**
 * Export jobs (docs/exports.md): a filtered case export rendered by a worker into storage, downloadable
 * through a signed link until `expires_at`, then removed by the maintenance job.
 */
export class M010Exports extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE exports (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        key_id uuid REFERENCES api_keys (id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED,
        subject text NOT NULL CHECK (subject IN ('cases', 'findings')),
        format text NOT NULL CHECK (format IN ('csv', 'jsonl', 'sarif', 'cyclonedx-vex')),
        filter jsonb NOT NULL DEFAULT '{}',
        status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed')),
        rows_total integer,
        rows_written integer NOT NULL DEFAULT 0,
        bytes bigint,
        storage_key text,
        error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        expires_at timestamptz NOT NULL
      )`);
    this.addSql(`CREATE INDEX exports_ws_created_idx ON exports (workspace_id, created_at DESC)`);
    this.addSql(`CREATE INDEX exports_expires_idx ON exports (expires_at)`);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE IF EXISTS exports');
  }
}
