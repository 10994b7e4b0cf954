import { Migration } from '@mikro-orm/migrations';

/**
 * CISA's own SSVC decision points per CVE, from its Vulnrichment records (docs/triage.md#enrichment).
 * Values are the decision table's (`public_poc`, not CISA's `poc`); `scored_at` is CISA's timestamp,
 * so a reload keeps the newer of two decisions for one CVE.
 */
export class M023CisaSsvc extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE cisa_ssvc (
        cve_id text PRIMARY KEY,
        exploitation text NOT NULL CHECK (exploitation IN ('none', 'public_poc', 'active')),
        automatable text NOT NULL CHECK (automatable IN ('no', 'yes')),
        technical_impact text NOT NULL CHECK (technical_impact IN ('partial', 'total')),
        ssvc_version text NOT NULL,
        scored_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    this.addSql(`ALTER TABLE enrichment_imports DROP CONSTRAINT IF EXISTS enrichment_imports_source_check`);
    this.addSql(
      `ALTER TABLE enrichment_imports ADD CONSTRAINT enrichment_imports_source_check
         CHECK (source IN ('kev', 'epss', 'nvd', 'vulnrichment'))`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`DELETE FROM enrichment_imports WHERE source = 'vulnrichment'`);
    this.addSql(`ALTER TABLE enrichment_imports DROP CONSTRAINT IF EXISTS enrichment_imports_source_check`);
    this.addSql(
      `ALTER TABLE enrichment_imports ADD CONSTRAINT enrichment_imports_source_check
         CHECK (source IN ('kev', 'epss', 'nvd'))`,
    );
    this.addSql('DROP TABLE IF EXISTS cisa_ssvc');
  }
}
