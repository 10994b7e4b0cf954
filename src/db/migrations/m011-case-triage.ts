import { Migration } from '@mikro-orm/migrations';

const PRIORITIES = `('CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO')`;
const ACTIONS = `('PATCH_IMMEDIATELY', 'PATCH_SCHEDULED', 'MITIGATE', 'MONITOR', 'INVESTIGATE', 'ACCEPT_RISK')`;

/**
 * Case triage (docs/cases.md#stale-triage): a case's current triage answer, whether it went stale,
 * and an append-only history of every answer.
 *
 * - The current answer lives on `cases` (nullable columns, added without a table rewrite); the
 *   CHECK keeps them all set or all null, so "triaged" is `triaged_at IS NOT NULL`.
 * - `triaged_kev`, `triaged_epss`, `triaged_cvss` are the case's enrichment when it was triaged
 *   (KEV membership of any of its CVEs, their highest EPSS and NVD CVSS base score). Staleness
 *   compares them with today's enrichment, so EPSS drifting 0.05 a day for two days is a change
 *   of 0.1 since the triage, which comparing each load with the one before would miss.
 * - `priority_rank` (0 CRITICAL … 4 INFO, 5 untriaged) is the sort key of `sort=priority`,
 *   written with the answer, so keyset paging uses an index instead of a CASE expression.
 * - No index on `last_seen`: every scan updates it on every case it sights, and an index on it
 *   would turn those HOT updates into index writes on the ingest path; `sort=lastSeen` sorts
 *   the workspace's matching cases instead.
 * - The upload option `triage` (docs/cases.md#case-triage) on `scans`: the mode asked for, and once the scan's
 *   cases were chosen, how many it named (`triage_requested`) and how many were left out for
 *   want of AI calls (`triage_skipped`); null until then. A scan's triage batch has its id.
 * - `triage_batch_items.case_id`: the case a case-triage item answers for (null for a batch of
 *   plain requests). No foreign key: an item outlives nothing, and a deleted case drops its answer.
 */
export class M011CaseTriage extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      ALTER TABLE cases
        ADD COLUMN priority text CHECK (priority IN ${PRIORITIES}),
        ADD COLUMN recommended_action text CHECK (recommended_action IN ${ACTIONS}),
        ADD COLUMN reasoning text,
        ADD COLUMN confidence_score double precision CHECK (confidence_score BETWEEN 0 AND 1),
        ADD COLUMN severity_override text CHECK (severity_override IN ${PRIORITIES}),
        ADD COLUMN model text,
        ADD COLUMN triaged_at timestamptz,
        ADD COLUMN policy_version text,
        ADD COLUMN triaged_kev boolean,
        ADD COLUMN triaged_epss double precision,
        ADD COLUMN triaged_cvss numeric(3, 1),
        ADD COLUMN triage_stale boolean NOT NULL DEFAULT false,
        ADD COLUMN priority_rank smallint NOT NULL DEFAULT 5 CHECK (priority_rank BETWEEN 0 AND 5),
        ADD CONSTRAINT cases_triage_complete CHECK (
          (triaged_at IS NULL AND priority IS NULL AND recommended_action IS NULL AND reasoning IS NULL
             AND confidence_score IS NULL AND model IS NULL AND policy_version IS NULL AND NOT triage_stale)
          OR (triaged_at IS NOT NULL AND priority IS NOT NULL AND recommended_action IS NOT NULL
             AND reasoning IS NOT NULL AND confidence_score IS NOT NULL AND model IS NOT NULL
             AND policy_version IS NOT NULL AND triaged_kev IS NOT NULL))`);
    this.addSql(`CREATE INDEX cases_ws_priority_idx ON cases (workspace_id, priority_rank, seq DESC)`);
    this.addSql(`CREATE INDEX cases_ws_first_seen_idx ON cases (workspace_id, first_seen DESC, seq DESC)`);
    this.addSql(`CREATE INDEX cases_ws_stale_idx ON cases (workspace_id, seq DESC) WHERE triage_stale`);
    // What stale marking scans when a whole feed changed (EPSS): only the triaged, fresh cases.
    this.addSql(
      `CREATE INDEX cases_triaged_fresh_idx ON cases (seq) WHERE triaged_at IS NOT NULL AND NOT triage_stale`,
    );

    this.addSql(`
      CREATE TABLE case_triage_history (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        case_id uuid NOT NULL REFERENCES cases (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        key_id uuid REFERENCES api_keys (id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED,
        result_id uuid,
        priority text NOT NULL CHECK (priority IN ${PRIORITIES}),
        recommended_action text NOT NULL CHECK (recommended_action IN ${ACTIONS}),
        reasoning text NOT NULL,
        confidence_score double precision NOT NULL CHECK (confidence_score BETWEEN 0 AND 1),
        severity_override text CHECK (severity_override IN ${PRIORITIES}),
        model text NOT NULL,
        triaged_at timestamptz NOT NULL,
        policy_version text NOT NULL,
        kev boolean NOT NULL,
        epss double precision,
        cvss numeric(3, 1),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`CREATE INDEX case_triage_history_case_idx ON case_triage_history (case_id, id DESC)`);
    this.addSql(`CREATE INDEX case_triage_history_ws_idx ON case_triage_history (workspace_id, id DESC)`);

    this.addSql(`
      ALTER TABLE scans
        ADD COLUMN triage text NOT NULL DEFAULT 'none' CHECK (triage IN ('none', 'new', 'all')),
        ADD COLUMN triage_requested integer CHECK (triage_requested >= 0),
        ADD COLUMN triage_skipped integer CHECK (triage_skipped >= 0)`);
    this.addSql(`ALTER TABLE triage_batch_items ADD COLUMN case_id uuid`);
  }

  override async down(): Promise<void> {
    this.addSql('ALTER TABLE triage_batch_items DROP COLUMN IF EXISTS case_id');
    this.addSql(
      'ALTER TABLE scans DROP COLUMN IF EXISTS triage, DROP COLUMN IF EXISTS triage_requested, DROP COLUMN IF EXISTS triage_skipped',
    );
    this.addSql('DROP TABLE IF EXISTS case_triage_history');
    this.addSql(
      'DROP INDEX IF EXISTS cases_ws_priority_idx, cases_ws_first_seen_idx, cases_ws_stale_idx, cases_triaged_fresh_idx',
    );
    this.addSql(`
      ALTER TABLE cases DROP CONSTRAINT IF EXISTS cases_triage_complete,
        DROP COLUMN IF EXISTS priority, DROP COLUMN IF EXISTS recommended_action, DROP COLUMN IF EXISTS reasoning,
        DROP COLUMN IF EXISTS confidence_score, DROP COLUMN IF EXISTS severity_override, DROP COLUMN IF EXISTS model,
        DROP COLUMN IF EXISTS triaged_at, DROP COLUMN IF EXISTS policy_version, DROP COLUMN IF EXISTS triaged_kev,
        DROP COLUMN IF EXISTS triaged_epss, DROP COLUMN IF EXISTS triaged_cvss, DROP COLUMN IF EXISTS triage_stale,
        DROP COLUMN IF EXISTS priority_rank`);
  }
}
