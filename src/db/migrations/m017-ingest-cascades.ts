import { Migration } from '@mikro-orm/migrations';

/**
 * Scan ingestion without a per-row foreign-key check (figures in bench/ingest).
 *
 * `findings.scan_id → scans`, `evidence.finding_id → findings` and `cases.workspace_id →
 * workspaces` were checked once per inserted row at commit (a queued trigger event and an index
 * probe each): about 30% of the database's CPU while a scan's findings and evidence are COPYed,
 * and about 17% of completing a scan with new cases. Every row of these three tables is written
 * by the ingest path, which already guarantees what the keys checked:
 *
 * - a batch of findings is committed together with the progress UPDATE of its scan row, which
 *   locks that row (so a concurrent delete waits for the commit, then removes the rows) and
 *   fails the batch when the scan no longer exists (`scan-writer.ts`);
 * - evidence rows name the findings written in the same transaction;
 * - cases are upserted from a scan's findings while that scan's row is locked, and the scan
 *   references its workspace.
 *
 * What the keys did on delete is kept, set-based: statement-level triggers delete the findings
 * of deleted scans, the evidence of deleted findings and the cases of deleted workspaces
 * (ON DELETE CASCADE did the same row by row). Deleting a workspace still removes its scans,
 * their findings and evidence, and its cases with their histories.
 */
export class M017IngestCascades extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE findings DROP CONSTRAINT IF EXISTS findings_scan_id_fkey`);
    this.addSql(`ALTER TABLE evidence DROP CONSTRAINT IF EXISTS evidence_finding_id_fkey`);
    this.addSql(`ALTER TABLE cases DROP CONSTRAINT IF EXISTS cases_workspace_id_fkey`);
    this.addSql(`
      CREATE FUNCTION scans_cascade_findings() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM findings f USING gone WHERE f.scan_id = gone.id;
        RETURN NULL;
      END $$`);
    this.addSql(`
      CREATE TRIGGER scans_cascade_findings AFTER DELETE ON scans
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION scans_cascade_findings()`);
    this.addSql(`
      CREATE FUNCTION findings_cascade_evidence() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM evidence e USING gone WHERE e.finding_id = gone.id;
        RETURN NULL;
      END $$`);
    this.addSql(`
      CREATE TRIGGER findings_cascade_evidence AFTER DELETE ON findings
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION findings_cascade_evidence()`);
    this.addSql(`
      CREATE FUNCTION workspaces_cascade_cases() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM cases c USING gone WHERE c.workspace_id = gone.id;
        RETURN NULL;
      END $$`);
    this.addSql(`
      CREATE TRIGGER workspaces_cascade_cases AFTER DELETE ON workspaces
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION workspaces_cascade_cases()`);
  }

  override async down(): Promise<void> {
    this.addSql(`DROP TRIGGER IF EXISTS workspaces_cascade_cases ON workspaces`);
    this.addSql(`DROP TRIGGER IF EXISTS findings_cascade_evidence ON findings`);
    this.addSql(`DROP TRIGGER IF EXISTS scans_cascade_findings ON scans`);
    this.addSql(
      `DROP FUNCTION IF EXISTS workspaces_cascade_cases(), findings_cascade_evidence(), scans_cascade_findings()`,
    );
    this.addSql(`
      ALTER TABLE cases ADD CONSTRAINT cases_workspace_id_fkey FOREIGN KEY (workspace_id)
        REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED`);
    this.addSql(`
      ALTER TABLE evidence ADD CONSTRAINT evidence_finding_id_fkey FOREIGN KEY (finding_id)
        REFERENCES findings (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED`);
    this.addSql(`
      ALTER TABLE findings ADD CONSTRAINT findings_scan_id_fkey FOREIGN KEY (scan_id)
        REFERENCES scans (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED`);
  }
}
