import { Migration } from '@mikro-orm/migrations';

/**
 * A finding carries its own evidence (figures in bench/ingest).
 *
 * Every finding had exactly one `evidence` row (`evidence.finding_id` was unique): the sighting's
 * bounded raw excerpt and scanner output, written by a second COPY in the same transaction as the
 * finding, with its own id, primary key, unique key and cascade trigger. That second table was
 * about a third of the database's work while a scan is stored. The two columns now live in
 * `findings`: one row, one COPY, one index set per sighting. A case's evidence is read from its
 * findings; an evidence id is its finding's id, its time the finding's `created_at` (the same
 * transaction's `now()` the evidence row had).
 */
export class M020EvidenceInFindings extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      ALTER TABLE findings
        ADD COLUMN raw_excerpt text NOT NULL DEFAULT '' CHECK (octet_length(raw_excerpt) <= 16384),
        ADD COLUMN scanner_output text CHECK (octet_length(scanner_output) <= 16384)`);
    this.addSql(`
      DO $$ BEGIN
        IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
          ALTER TABLE findings ALTER COLUMN raw_excerpt SET COMPRESSION lz4, ALTER COLUMN scanner_output SET COMPRESSION lz4;
        END IF;
      END $$`);
    this.addSql(`
      UPDATE findings f SET raw_excerpt = e.raw_excerpt, scanner_output = e.scanner_output
      FROM evidence e WHERE e.finding_id = f.id`);
    this.addSql(`DROP TRIGGER IF EXISTS findings_cascade_evidence ON findings`);
    this.addSql(`DROP FUNCTION IF EXISTS findings_cascade_evidence()`);
    this.addSql(`DROP TABLE evidence`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      CREATE TABLE evidence (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        finding_id uuid NOT NULL UNIQUE,
        scan_id uuid NOT NULL,
        raw_excerpt text NOT NULL CHECK (octet_length(raw_excerpt) <= 16384),
        scanner_output text CHECK (octet_length(scanner_output) <= 16384),
        seen_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`
      INSERT INTO evidence (id, finding_id, scan_id, raw_excerpt, scanner_output, seen_at)
      SELECT id, id, scan_id, raw_excerpt, scanner_output, created_at FROM findings`);
    this.addSql(`
      CREATE FUNCTION findings_cascade_evidence() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM evidence e USING gone WHERE e.finding_id = gone.id;
        RETURN NULL;
      END $$`);
    this.addSql(`
      CREATE TRIGGER findings_cascade_evidence AFTER DELETE ON findings
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION findings_cascade_evidence()`);
    this.addSql(`ALTER TABLE findings DROP COLUMN raw_excerpt, DROP COLUMN scanner_output`);
  }
}
