import { Migration } from '@mikro-orm/migrations';

/**
 * A cheaper write path for scan ingestion (docs/ingestion.md#upload, docs/cases.md; figures in bench/ingest):
 *
 * - `cases_ws_asset_idx` could serve no query: the asset filter is an OR over five columns, so
 *   the planner cannot use an index on one of them.
 * - `cases_first_scan_idx` only counted a scan's new cases; `completeScan` now counts the rows
 *   its upsert inserted.
 * - `evidence_scan_idx` only served deleting a failed scan's evidence, which now goes through
 *   its findings (`evidence_finding_id_key`).
 * - The foreign keys `evidence.scan_id` and `findings.workspace_id` checked, once per row at
 *   commit, what the other keys already imply: evidence belongs to its finding (deleted with
 *   it), and a finding to its scan, whose workspace it copies (a deleted workspace deletes its
 *   scans, their findings and evidence).
 * - `cases` leaves 20% of each page free, so a case seen again (new last_seen, sightings) is
 *   updated in place (HOT) instead of in all of its indexes.
 * - Evidence text too long to stay inline is compressed with lz4 rather than pglz, when the
 *   server is built with it (new values only).
 */
export class M005ScanWritePath extends Migration {
  override async up(): Promise<void> {
    this.addSql(`DROP INDEX IF EXISTS cases_ws_asset_idx`);
    this.addSql(`DROP INDEX IF EXISTS cases_first_scan_idx`);
    this.addSql(`DROP INDEX IF EXISTS evidence_scan_idx`);
    this.addSql(`ALTER TABLE evidence DROP CONSTRAINT IF EXISTS evidence_scan_id_fkey`);
    this.addSql(`ALTER TABLE findings DROP CONSTRAINT IF EXISTS findings_workspace_id_fkey`);
    this.addSql(`ALTER TABLE cases SET (fillfactor = 80)`);
    this.addSql(`
      DO $$ BEGIN
        IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
          ALTER TABLE evidence ALTER COLUMN raw_excerpt SET COMPRESSION lz4, ALTER COLUMN scanner_output SET COMPRESSION lz4;
        END IF;
      END $$`);
  }

  override async down(): Promise<void> {
    this.addSql(
      `ALTER TABLE evidence ALTER COLUMN raw_excerpt SET COMPRESSION DEFAULT, ALTER COLUMN scanner_output SET COMPRESSION DEFAULT`,
    );
    this.addSql(`ALTER TABLE cases RESET (fillfactor)`);
    this.addSql(`
      ALTER TABLE findings ADD CONSTRAINT findings_workspace_id_fkey FOREIGN KEY (workspace_id)
        REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED`);
    this.addSql(`
      ALTER TABLE evidence ADD CONSTRAINT evidence_scan_id_fkey FOREIGN KEY (scan_id)
        REFERENCES scans (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED`);
    this.addSql(`CREATE INDEX evidence_scan_idx ON evidence (scan_id)`);
    this.addSql(`CREATE INDEX cases_first_scan_idx ON cases (first_scan_id)`);
    this.addSql(`CREATE INDEX cases_ws_asset_idx ON cases (workspace_id, asset)`);
  }
}
