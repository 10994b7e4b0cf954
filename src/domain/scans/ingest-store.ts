import type { Db, Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import type { ScanScope } from '../../parsers/index.js';
import { markScanDuplicates } from '../cases/case-duplicates.js';
import { lockScanScope, resolveUnseenCases } from '../cases/case-resolution.js';
import { upsertScanCases } from '../cases/case-upsert.js';
import { recordScanDeliveries } from '../workflows/trigger.js';
import { EMPTY_SCOPE, NO_SCOPE_NOTE, rescanPlan } from './rescan-scope.js';

/**
 * The ingest's writes: persistence of a scan's findings (docs/ingestion.md#upload, docs/cases.md), in three set-based
 * steps after `startParsing` (`scan-store.ts`) claimed the scan:
 *
 * 1. While parsing, a {@link openScanWriter | scan writer} COPYs each batch into findings (each
 *    with its evidence) and records progress, one transaction per commit. Stored rows are always a prefix
 *    of the parser's output, so a retried or crashed job resumes after them and never stores a
 *    record twice (UNIQUE (scan_id, record_index) guards the rest).
 * 2. {@link completeScan} once the file is parsed: in one transaction, upsert the cases by
 *    (workspace, fingerprint) (`upsertScanCases` of `domain/cases`), resolve the cases of its
 *    scope it did not see (`case-resolution.ts`), mark its new cases that duplicate an open case
 *    (`markScanDuplicates`, last: it holds a workspace lock), derive every counter from the stored findings, and mark the scan
 *    completed. Counters are never incremented per batch, so a half-counted scan cannot exist,
 *    and findings are not rewritten (they reach their case through the fingerprint).
 * 3. `failScanForGood` (scan-failure.ts) when the file is broken or the job is given up: the
 *    scan's stored rows and file are deleted and the error (code, message, line, column) recorded.
 *
 * Readers only show findings (and so evidence) of completed scans.
 */

/**
 * The final step: cases and counters derived from the scan's stored findings,
 * all in one transaction with the status change. Resolved cases seen again are reopened, with
 * the change in their history; open and in-progress cases of the scan's scope it did not see are
 * resolved (docs/ingestion.md#rescans), with their history, unless the upload said
 * `resolveMissing=false`; the workflow deliveries of the created, reopened and resolved cases are
 * recorded with them. Completions of overlapping scopes serialise on the
 * scope's advisory locks. Returns false when another attempt already finished the scan.
 */
export async function completeScan(
  pool: Pool,
  scanId: string,
  result: { bytes: number; notes: string[]; scope?: ScanScope },
): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    // No JIT: compiling a plan costs 0.3–0.6 s of CPU, more than any statement here runs (each
    // reads the scan's rows once), and what triggers it are cost estimates over rows written
    // without statistics, or inflated by `enable_nestloop = off` (measured in bench/ingest).
    await tx.query(sql`SET LOCAL jit = off`);
    const { rows } = await tx.query<{
      workspace_id: string;
      asset_name: string | null;
      resolve_missing: boolean;
    }>(
      sql`SELECT workspace_id, asset_name, resolve_missing FROM scans
          WHERE id = ${scanId} AND status = 'parsing' FOR UPDATE`,
    );
    const scan = rows[0];
    if (!scan) return false;
    const ws = scan.workspace_id;
    const plan = rescanPlan(result.scope ?? EMPTY_SCOPE, {
      assetName: scan.asset_name,
      resolveMissing: scan.resolve_missing,
    });
    const named = (await lockScanScope(tx, ws, plan.keys)) > 0;
    const { created, reopened } = await upsertScanCases(tx, scanId, ws, plan.hostless);
    const resolved = plan.resolve && named ? await resolveUnseenCases(tx, scanId, ws, plan.keys) : 0;
    // A case it created or saw again may be a duplicate (docs/cases.md#one-vulnerability-one-case). Last, so that
    // while it holds the workspace's marking lock this transaction writes only rows it holds (and
    // the new deliveries of those rows).
    await markScanDuplicates(tx, scanId, ws);
    // Its workflow deliveries commit with it (docs/workflows.md#when-deliveries-happen); after the
    // marking, since a rule leaves duplicates out.
    await recordScanDeliveries(tx, ws, scanId, { created, reopened, resolved });
    const notes = [...result.notes, ...plan.notes, ...(plan.resolve && !named ? [NO_SCOPE_NOTE] : [])];
    await tx.query(
      sql`WITH sev AS (SELECT severity, count(*)::int AS n FROM findings WHERE scan_id = ${scanId} GROUP BY severity),
       total AS (SELECT coalesce(sum(n), 0)::int AS n, coalesce(jsonb_object_agg(severity, n), '{}') AS j FROM sev)
       UPDATE scans SET status = 'completed', findings_count = total.n, new_cases = ${created}::int,
                        duplicates = total.n - ${created}::int, by_severity = total.j, bytes_parsed = ${result.bytes},
                        resolved_cases = ${resolved}::int, reopened_cases = ${reopened}::int,
                        notes = ${notes}, error = NULL, finished_at = now()
       FROM total WHERE scans.id = ${scanId}`,
    );
    return true;
  });
}

/**
 * How many findings a scan has stored and one past the highest record index among them: equal
 * when the stored rows are a prefix of the parser's output (the scan writer resumes there).
 */
export async function storedRecordRange(db: Db, scanId: string): Promise<{ count: number; next: number }> {
  const { rows } = await db.query<{ count: number; next: number }>(
    sql`SELECT count(*)::int AS count, coalesce(max(record_index) + 1, 0)::int AS next FROM findings WHERE scan_id = ${scanId}`,
  );
  return rows[0]!;
}

/** Deletes a scan's findings, with their evidence (m020: a finding carries its own). */
export async function deleteStoredRows(db: Db, scanId: string): Promise<void> {
  await db.query(sql`DELETE FROM findings WHERE scan_id = ${scanId}`);
}
