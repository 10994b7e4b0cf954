import { Migration } from '@mikro-orm/migrations';

/**
 * Scan ingestion (docs/cases.md#deduplication, docs/ingestion.md#formats): scans, the findings each scan yields, cases (findings
 * deduplicated by fingerprint within a workspace), evidence (one row per sighting) and the
 * status history of cases.
 *
 * Invariants:
 * - A finding is keyed by (scan_id, record_index): a retried or crashed ingest job re-inserts
 *   with ON CONFLICT DO NOTHING and never duplicates.
 * - A finding belongs to the case of its (workspace_id, fingerprint); the link is that key, not
 *   a column written after the fact, so completing a scan never rewrites its findings.
 * - Findings and evidence are visible to readers only once their scan is `completed`; the final
 *   step upserts the cases, derives the counters and completes the scan in one transaction, so a
 *   scan's findings, cases and evidence appear all at once or not at all.
 * Foreign keys are DEFERRABLE INITIALLY DEFERRED, like m001.
 */
export class M003Scans extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE scans (
        id uuid PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        key_id uuid REFERENCES api_keys (id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED,
        name text,
        format text NOT NULL CHECK (format IN ('nessus', 'qualys', 'openvas', 'sarif', 'cyclonedx', 'cli')),
        status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'parsing', 'completed', 'failed')),
        bytes bigint NOT NULL CHECK (bytes >= 0),
        bytes_parsed bigint NOT NULL DEFAULT 0,
        sha256 text NOT NULL,
        storage_path text NOT NULL,
        content_encoding text,
        idempotency_key text,
        asset_name text,
        asset_environment text,
        asset_criticality text,
        asset_internet_exposed boolean,
        findings_count integer NOT NULL DEFAULT 0,
        new_cases integer NOT NULL DEFAULT 0,
        duplicates integer NOT NULL DEFAULT 0,
        by_severity jsonb NOT NULL DEFAULT '{}',
        notes text[] NOT NULL DEFAULT '{}',
        error jsonb,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz
      )`);
    this.addSql(
      `CREATE UNIQUE INDEX scans_idempotency_key ON scans (workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );
    this.addSql(`CREATE INDEX scans_ws_seq_idx ON scans (workspace_id, seq DESC)`);

    this.addSql(`
      CREATE TABLE cases (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigint GENERATED ALWAYS AS IDENTITY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        fingerprint text NOT NULL,
        title text NOT NULL,
        severity text NOT NULL CHECK (severity IN ('CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO')),
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'resolved', 'risk_accepted', 'false_positive')),
        scanner text NOT NULL,
        rule_id text,
        cve_ids text[] NOT NULL DEFAULT '{}',
        cwe_ids text[] NOT NULL DEFAULT '{}',
        cvss_score numeric(3, 1),
        asset text,
        host text,
        ip text,
        fqdn text,
        component text,
        port integer,
        protocol text,
        first_scan_id uuid NOT NULL,
        last_scan_id uuid NOT NULL,
        first_seen timestamptz NOT NULL,
        last_seen timestamptz NOT NULL,
        sightings integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`CREATE UNIQUE INDEX cases_ws_fingerprint_key ON cases (workspace_id, fingerprint)`);
    this.addSql(`CREATE INDEX cases_ws_seq_idx ON cases (workspace_id, seq DESC)`);
    this.addSql(`CREATE INDEX cases_ws_status_idx ON cases (workspace_id, status, seq DESC)`);
    this.addSql(`CREATE INDEX cases_ws_severity_idx ON cases (workspace_id, severity, seq DESC)`);
    this.addSql(`CREATE INDEX cases_ws_asset_idx ON cases (workspace_id, asset)`);
    this.addSql(`CREATE INDEX cases_cve_idx ON cases USING gin (cve_ids)`);
    this.addSql(`CREATE INDEX cases_first_scan_idx ON cases (first_scan_id)`);

    this.addSql(`
      CREATE TABLE findings (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigint GENERATED ALWAYS AS IDENTITY,
        scan_id uuid NOT NULL REFERENCES scans (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        record_index integer NOT NULL,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        fingerprint text NOT NULL,
        scanner text NOT NULL,
        rule_id text,
        title text NOT NULL,
        severity text NOT NULL CHECK (severity IN ('CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO')),
        cve_ids text[] NOT NULL DEFAULT '{}',
        cwe_ids text[] NOT NULL DEFAULT '{}',
        cvss_score numeric(3, 1),
        cvss_vector text,
        cvss_v3_score numeric(3, 1),
        cvss_v3_vector text,
        cvss_v2_score numeric(3, 1),
        cvss_v2_vector text,
        description text,
        solution text,
        asset text,
        host text,
        ip text,
        fqdn text,
        os text,
        component text,
        component_version text,
        purl text,
        file text,
        line integer,
        port integer,
        protocol text,
        exploit_available boolean,
        confidence integer,
        suppressed boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (scan_id, record_index)
      )`);
    this.addSql(`CREATE INDEX findings_ws_seq_idx ON findings (workspace_id, seq DESC)`);
    this.addSql(`CREATE INDEX findings_ws_fingerprint_idx ON findings (workspace_id, fingerprint)`);
    this.addSql(`CREATE INDEX findings_ws_severity_idx ON findings (workspace_id, severity, seq DESC)`);
    this.addSql(`CREATE INDEX findings_cve_idx ON findings USING gin (cve_ids)`);

    this.addSql(`
      CREATE TABLE evidence (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        finding_id uuid NOT NULL UNIQUE REFERENCES findings (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        scan_id uuid NOT NULL REFERENCES scans (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        raw_excerpt text NOT NULL CHECK (octet_length(raw_excerpt) <= 16384),
        scanner_output text CHECK (octet_length(scanner_output) <= 16384),
        seen_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`CREATE INDEX evidence_scan_idx ON evidence (scan_id)`);

    this.addSql(`
      CREATE TABLE case_status_history (
        id bigserial PRIMARY KEY,
        case_id uuid NOT NULL REFERENCES cases (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        from_status text,
        to_status text NOT NULL,
        actor text NOT NULL,
        note text CHECK (length(note) <= 2000),
        at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`CREATE INDEX case_status_history_case_idx ON case_status_history (case_id, at)`);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE IF EXISTS case_status_history, evidence, findings, cases, scans');
  }
}
