import { Migration } from '@mikro-orm/migrations';

/**
 * Mapped workflows (docs/workflows.md#rules): a workspace's rules that send cases to Jira,
 * GitHub Issues or a signed webhook, the link of each case to its external issue, and the
 * deliveries made on the way.
 *
 * - `workflows.target` holds the target's non-secret settings (base URL, project, repository,
 *   transition names); the credential (Jira API token, GitHub token) and the signing secret
 *   (outbound webhook signatures, inbound Jira/GitHub webhook verification) are sealed with a
 *   key derived from KEY_PEPPER and never leave the service after creation.
 * - `workflow_links` is the idempotency record of "exactly one external issue per case and
 *   workflow": its row (primary key (workflow, case)) is written before the first remote call,
 *   with the marker the remote issue carries, so a retry after a crash between "created
 *   remotely" and "stored locally" searches for the marker instead of creating a second issue.
 *   `remote_state` is what the remote issue is believed to be (open/closed): a delivery only
 *   transitions when the case's wanted state differs, and an inbound webhook records the state
 *   it saw, so a change made by the remote side is never echoed back.
 * - `workflow_deliveries`: one row per (event, case, workflow), the job's record of attempts,
 *   last response code, error and next attempt time. Test deliveries have no case.
 * - `workflow_inbound_events`: delivery ids of inbound webhooks already applied (replay refusal).
 */
export class M013Workflows extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE workflows (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        kind text NOT NULL CHECK (kind IN ('jira', 'github', 'webhook')),
        enabled boolean NOT NULL DEFAULT true,
        target jsonb NOT NULL,
        credential_sealed text,
        credential_hint text,
        secret_sealed text NOT NULL,
        rule jsonb NOT NULL DEFAULT '{}',
        fields jsonb NOT NULL DEFAULT '{}',
        status_map jsonb NOT NULL DEFAULT '{}',
        last_error text,
        last_delivery_status text,
        last_delivery_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`CREATE INDEX workflows_ws_idx ON workflows (workspace_id, created_at DESC)`);
    this.addSql(`
      CREATE TABLE workflow_links (
        workflow_id uuid NOT NULL REFERENCES workflows (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        case_id uuid NOT NULL REFERENCES cases (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        workspace_id uuid NOT NULL,
        marker text NOT NULL UNIQUE,
        external_id text,
        url text,
        remote_state text NOT NULL DEFAULT 'open' CHECK (remote_state IN ('open', 'closed')),
        create_attempts integer NOT NULL DEFAULT 0,
        last_delivered_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workflow_id, case_id)
      )`);
    this.addSql(`CREATE INDEX workflow_links_case_idx ON workflow_links (case_id)`);
    this.addSql(`CREATE INDEX workflow_links_external_idx ON workflow_links (workflow_id, external_id)`);
    this.addSql(`
      CREATE TABLE workflow_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigint GENERATED ALWAYS AS IDENTITY,
        workflow_id uuid NOT NULL REFERENCES workflows (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        workspace_id uuid NOT NULL,
        case_id uuid REFERENCES cases (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        event text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        response_code integer,
        error text,
        next_attempt_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      )`);
    this.addSql(`CREATE INDEX workflow_deliveries_wf_idx ON workflow_deliveries (workflow_id, seq DESC)`);
    this.addSql(`CREATE INDEX workflow_deliveries_case_idx ON workflow_deliveries (case_id, seq)`);
    this.addSql(`
      CREATE TABLE workflow_inbound_events (
        workflow_id uuid NOT NULL REFERENCES workflows (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        delivery_id text NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workflow_id, delivery_id)
      )`);
  }

  override async down(): Promise<void> {
    this.addSql(
      'DROP TABLE IF EXISTS workflow_inbound_events, workflow_deliveries, workflow_links, workflows',
    );
  }
}
