import { Migration } from '@mikro-orm/migrations';

/**
 * Fewer index entries written per new case (the case upsert of a scan's completion writes every
 * index of `cases` once per case; docs/architecture.md#one-scan-upload):
 *
 * - `cases_vuln_keys_idx` (GIN over `vuln_keys`) is dropped: no statement reads through it. The
 *   duplicate marking joins keys by equality with hash joins (`case-duplicates.ts`), because array
 *   overlap through this index rechecks every row against the whole key array; the marking's plan
 *   does not change.
 * - `cases_ws_assignee_idx` becomes partial (`WHERE assignee IS NOT NULL`): every case is created
 *   without an owner, so the full index held an entry per case that no filter used. `assignee=`
 *   and `unassigned=false` imply its predicate and still use it; `unassigned=true` (most cases of
 *   a workspace) never profited from it.
 */
export class M035CaseIndexDiet extends Migration {
  override async up(): Promise<void> {
    this.addSql(`DROP INDEX IF EXISTS cases_vuln_keys_idx`);
    this.addSql(`DROP INDEX IF EXISTS cases_ws_assignee_idx`);
    this.addSql(
      `CREATE INDEX cases_ws_assignee_idx ON cases (workspace_id, assignee) WHERE assignee IS NOT NULL`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`DROP INDEX IF EXISTS cases_ws_assignee_idx`);
    this.addSql(`CREATE INDEX cases_ws_assignee_idx ON cases (workspace_id, assignee)`);
    this.addSql(`CREATE INDEX cases_vuln_keys_idx ON cases USING gin (vuln_keys)`);
  }
}
