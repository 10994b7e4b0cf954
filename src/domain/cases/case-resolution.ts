import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { scanScopeKeysSql, type ScanScopeKeys } from './case-scope.js';

/**
 * A rescan resolves what it no longer sees, within its scope only (docs/ingestion.md#rescans):
 * inside the scan's completion transaction, after its cases were upserted (so every case it
 * sighted has it as `last_scan_id`), the open and in-progress cases of its scope that it did not
 * sight become `resolved`, each with a history row (actor `scan:<id>`, reason `not_seen`).
 * `risk_accepted` and `false_positive` cases are never touched, nor cases of other scopes.
 */

/** Lock buckets per scanner: two scans whose scopes share a host share a bucket. */
const LOCK_BUCKETS = 64;

/**
 * Serialises the completions of scans whose scopes overlap: a transaction-scoped advisory lock
 * per (workspace, scanner, bucket of the scope's where), taken in one order, so two scans of one
 * scope complete one after the other and never deadlock on these locks. Bucketed so a scan of
 * many hosts takes at most {@link LOCK_BUCKETS} locks per scanner. Returns how many scope keys
 * the scan has (0: no scope it can name).
 */
export async function lockScanScope(tx: Db, workspaceId: string, scope: ScanScopeKeys): Promise<number> {
  const { rows } = await tx.query<{ lock: string; keys: number }>(
    sql`WITH keys AS (${scanScopeKeysSql(scope)})
        SELECT DISTINCT hashtextextended(${workspaceId}::text || '|' || (key::json ->> 0) || '|' ||
                 ((hashtext(key::json ->> 1) & ${LOCK_BUCKETS - 1}))::text, 24)::text AS lock,
               (SELECT count(*) FROM keys)::int AS keys
        FROM keys ORDER BY lock`,
  );
  for (const r of rows) await tx.query(sql`SELECT pg_advisory_xact_lock(${r.lock}::bigint)`);
  return rows[0]?.keys ?? 0;
}

/**
 * Resolves the open and in-progress cases of the scan's scope that it did not sight, with their
 * history. Call after {@link lockScanScope} and the upsert of its cases, in the same transaction.
 * Returns how many it resolved.
 */
export async function resolveUnseenCases(
  tx: Db,
  scanId: string,
  workspaceId: string,
  scope: ScanScopeKeys,
): Promise<number> {
  const { rowCount } = await tx.query(
    // The old status comes from the snapshot; the conditions on `c` itself are checked again on a
    // row another transaction changed meanwhile (a status PATCH), so an accepted or
    // false-positive case is never resolved. No FOR UPDATE: the UPDATE locks only what it changes.
    // One index probe per scope key (`OFFSET 0` keeps the lateral subquery a nested loop driven
    // by the keys): the scan's cases were just written and have no statistics, and the planner,
    // taking them for one row, rescanned every key once per open case (17,671 × 1,831 compared).
    // The update then reads those cases by id, not every open case of the table.
    sql`WITH keys AS MATERIALIZED (${scanScopeKeysSql(scope)}),
     stale AS MATERIALIZED (
       SELECT o.id, o.status, o.scope FROM keys, LATERAL (
         SELECT c.id, c.status, c.scope FROM cases c
         WHERE c.workspace_id = ${workspaceId} AND c.scope = keys.key AND c.scope IS NOT NULL
           AND c.status IN ('open', 'in_progress') AND c.last_scan_id <> ${scanId}::uuid
         OFFSET 0) o
     ),
     resolved AS (
       UPDATE cases c SET status = 'resolved', updated_at = now()
       FROM stale old
       WHERE c.id = ANY(ARRAY(SELECT id FROM stale)) AND old.id = c.id AND c.status IN ('open', 'in_progress') AND c.scope = old.scope
         AND c.last_scan_id <> ${scanId}::uuid
       RETURNING c.id, old.status AS from_status
     )
     INSERT INTO case_status_history (case_id, from_status, to_status, actor, reason, note)
     SELECT id, from_status, 'resolved', 'scan:' || ${scanId}::text, 'not_seen',
            'Not seen by a rescan of its scope.' FROM resolved`,
  );
  return rowCount ?? 0;
}
