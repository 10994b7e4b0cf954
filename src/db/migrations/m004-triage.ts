import { Migration } from '@mikro-orm/migrations';

/**
 * Triage records (docs/triage.md#request-and-answer): every answered request with its hops (for audit and
 * the billing test), in-house shadow answers, and batches with one row per item.
 */
export class M004Triage extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE triage_results (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        key_id uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        batch_id uuid,
        model text NOT NULL,
        priority text NOT NULL,
        response jsonb NOT NULL,
        hops jsonb NOT NULL,
        policy_changes jsonb NOT NULL,
        policy_version text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`CREATE INDEX triage_results_ws_idx ON triage_results (workspace_id, created_at)`);
    this.addSql(`
      CREATE TABLE triage_shadow_answers (
        id bigserial PRIMARY KEY,
        triage_result_id uuid NOT NULL REFERENCES triage_results (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        engine text NOT NULL,
        model_version text NOT NULL,
        answer jsonb NOT NULL,
        agrees boolean NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`
      CREATE TABLE triage_batches (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        key_id uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'partial')),
        total integer NOT NULL CHECK (total > 0),
        completed integer NOT NULL DEFAULT 0,
        failed integer NOT NULL DEFAULT 0,
        reservation_id uuid,
        webhook_url text,
        webhook_key_sealed text,
        webhook_status text,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      )`);
    this.addSql(`CREATE INDEX triage_batches_ws_idx ON triage_batches (workspace_id, created_at)`);
    this.addSql(`
      CREATE TABLE triage_batch_items (
        batch_id uuid NOT NULL REFERENCES triage_batches (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        index integer NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'completed', 'failed')),
        request jsonb NOT NULL,
        result jsonb,
        error jsonb,
        finished_at timestamptz,
        PRIMARY KEY (batch_id, index)
      )`);
  }

  override async down(): Promise<void> {
    this.addSql(
      'DROP TABLE IF EXISTS triage_batch_items, triage_batches, triage_shadow_answers, triage_results',
    );
  }
}
