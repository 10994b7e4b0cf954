import { Migration } from '@mikro-orm/migrations';

/**
 * One delivery at a time per (workflow, case) without holding a database connection across the
 * remote call (docs/workflows.md). The attempt used a session advisory lock, which pinned one pooled
 * connection for the whole remote call (up to a 10 s timeout per request, several requests per
 * attempt): four concurrent deliveries held four of the process pool's ten connections while
 * waiting on Jira or GitHub. Now an attempt takes a lease row, committed before the call:
 *
 * - taken by INSERT … ON CONFLICT DO UPDATE … WHERE leased_until < now(): free, or its holder
 *   crashed and the lease ran out;
 * - renewed (and checked: `holder` is the fence) before each remote call, so a live holder never
 *   loses it and one that lost it makes no further call;
 * - deleted by its holder when the attempt ends, so the table holds only attempts in progress
 *   (and leases of crashed holders until the next attempt takes them over).
 *
 * No foreign key to `cases`: a row lives for one attempt, and a case deleted meanwhile only
 * leaves a row that the next take overwrites or nobody reads.
 *
 * UNLOGGED: a lease is written and deleted once per delivery, and a logged table made each of
 * those a WAL flush (a regular table halved delivery throughput in bench/workflows). A crash of
 * PostgreSQL empties it, which releases every lease: the same as the session advisory lock it
 * replaces, which a crash (or a lost connection) released too.
 */
export class M019WorkflowCaseLeases extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE UNLOGGED TABLE workflow_case_leases (
        workflow_id uuid NOT NULL REFERENCES workflows (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        case_id uuid NOT NULL,
        holder uuid NOT NULL,
        leased_until timestamptz NOT NULL,
        PRIMARY KEY (workflow_id, case_id)
      )`);
  }

  override async down(): Promise<void> {
    this.addSql(`DROP TABLE IF EXISTS workflow_case_leases`);
  }
}
