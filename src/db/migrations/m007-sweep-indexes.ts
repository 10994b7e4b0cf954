import { Migration } from '@mikro-orm/migrations';

/**
 * Partial indexes for the maintenance sweeps (`domain/maintenance.ts`), which run every few
 * minutes: without them each run scans every scan and batch ever stored to find the few that
 * are unfinished. Each index holds only the rows the sweep looks for, so it stays small.
 */
export class M007SweepIndexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `CREATE INDEX scans_unfinished_idx ON scans (created_at) WHERE status IN ('queued', 'parsing')`,
    );
    this.addSql(
      `CREATE INDEX triage_batches_unfinished_idx ON triage_batches (created_at) WHERE finished_at IS NULL`,
    );
    this.addSql(
      `CREATE INDEX triage_batches_webhook_pending_idx ON triage_batches (finished_at) WHERE webhook_status = 'pending'`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      'DROP INDEX IF EXISTS scans_unfinished_idx, triage_batches_unfinished_idx, triage_batches_webhook_pending_idx',
    );
  }
}
