import { Migration } from '@mikro-orm/migrations';

/**
 * Slack incoming webhooks join the workflow targets (docs/workflows.md#slack). The CHECK on
 * `workflows.kind` lists the kinds of `domain/workflows/targets/registry.ts`; a test compares the
 * two, so a new target kind comes with a migration like this one.
 */
export class M021WorkflowSlackTarget extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE workflows DROP CONSTRAINT IF EXISTS workflows_kind_check`);
    this.addSql(
      `ALTER TABLE workflows ADD CONSTRAINT workflows_kind_check
         CHECK (kind IN ('jira', 'github', 'webhook', 'slack'))`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`DELETE FROM workflows WHERE kind = 'slack'`);
    this.addSql(`ALTER TABLE workflows DROP CONSTRAINT IF EXISTS workflows_kind_check`);
    this.addSql(
      `ALTER TABLE workflows ADD CONSTRAINT workflows_kind_check CHECK (kind IN ('jira', 'github', 'webhook'))`,
    );
  }
}
