import { Migration } from '@mikro-orm/migrations';

/**
 * Requests that got no answer (503 `triage_unavailable`, docs/api.md#errors, docs/triage.md#request-and-answer): the hops they made,
 * with the tokens providers charged us for answers we could not use (schema violations,
 * errors that still reported usage). Kept for our own cost accounting, apart from the usage
 * ledger: such a request is never billed to its key and counts no AI call (docs/triage.md#billing).
 */
export class M006TriageUnanswered extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE triage_unanswered (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        key_id uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        request_id text NOT NULL,
        hops jsonb NOT NULL,
        input_tokens integer NOT NULL,
        output_tokens integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`CREATE INDEX triage_unanswered_ws_idx ON triage_unanswered (workspace_id, created_at)`);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE IF EXISTS triage_unanswered');
  }
}
