import { Migration } from '@mikro-orm/migrations';

/**
 * Enrichment store (docs/triage.md#enrichment): one table per source, so a full reload of one
 * feed (KEV, the daily EPSS file) replaces exactly that source's rows.
 */
export class M002Enrichment extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE kev_entries (
        cve_id text PRIMARY KEY,
        vendor_project text,
        product text,
        vulnerability_name text,
        date_added date,
        due_date date,
        known_ransomware boolean NOT NULL DEFAULT false,
        catalog_version text
      )`);
    this.addSql(`
      CREATE TABLE epss_scores (
        cve_id text PRIMARY KEY,
        epss double precision NOT NULL CHECK (epss BETWEEN 0 AND 1),
        percentile double precision NOT NULL CHECK (percentile BETWEEN 0 AND 1),
        score_date date
      )`);
    this.addSql(`
      CREATE TABLE cvss_scores (
        cve_id text PRIMARY KEY,
        base_score numeric(3, 1) NOT NULL CHECK (base_score BETWEEN 0 AND 10),
        version text NOT NULL,
        vector text,
        source text,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`
      CREATE TABLE enrichment_imports (
        id bigserial PRIMARY KEY,
        source text NOT NULL CHECK (source IN ('kev', 'epss', 'nvd')),
        origin text NOT NULL,
        rows integer NOT NULL,
        finished_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE IF EXISTS enrichment_imports, cvss_scores, epss_scores, kev_entries');
  }
}
