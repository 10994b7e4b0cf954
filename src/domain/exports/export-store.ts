import type { Db } from '../../db/pool.js';
import { sql, type SqlFragment } from '../../db/sql.js';
import { isUuid } from '../../lib/ids.js';
import { selectCases, toCase, type Case, type CaseRow } from '../cases/case.js';
import { filterWhere, type ListFilters } from '../cases/list-filters.js';
import type { ExportFormat } from './formats.js';

/**
 * The only module that names the `exports` table. It reads an export's cases through the cases
 * area's one case statement (`selectCases` of `domain/cases/case.ts`), a keyset page at a time.
 */

export type ExportSubject = 'cases' | 'findings';
export type ExportStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface ExportRecord {
  id: string;
  workspaceId: string;
  keyId: string | null;
  subject: ExportSubject;
  format: ExportFormat;
  filter: ListFilters;
  status: ExportStatus;
  rowsTotal: number | null;
  rowsWritten: number;
  bytes: number | null;
  storageKey: string | null;
  error: string | null;
  createdAt: Date;
  finishedAt: Date | null;
  expiresAt: Date;
}

interface ExportRow {
  id: string;
  workspace_id: string;
  key_id: string | null;
  subject: ExportSubject;
  format: ExportFormat;
  filter: ListFilters;
  status: ExportStatus;
  rows_total: number | null;
  rows_written: number;
  bytes: string | null;
  storage_key: string | null;
  error: string | null;
  created_at: Date;
  finished_at: Date | null;
  expires_at: Date;
}

const toRecord = (r: ExportRow): ExportRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  keyId: r.key_id,
  subject: r.subject,
  format: r.format,
  filter: r.filter,
  status: r.status,
  rowsTotal: r.rows_total,
  rowsWritten: r.rows_written,
  bytes: r.bytes === null ? null : Number(r.bytes),
  storageKey: r.storage_key,
  error: r.error,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
  expiresAt: r.expires_at,
});

export async function insertExport(
  db: Db,
  e: Pick<ExportRecord, 'id' | 'workspaceId' | 'keyId' | 'subject' | 'format' | 'filter' | 'expiresAt'>,
): Promise<ExportRecord> {
  const { rows } = await db.query<ExportRow>(
    sql`INSERT INTO exports (id, workspace_id, key_id, subject, format, filter, expires_at)
        VALUES (${e.id}, ${e.workspaceId}, ${e.keyId}, ${e.subject}, ${e.format}, ${JSON.stringify(e.filter)},
          ${e.expiresAt}) RETURNING *`,
  );
  return toRecord(rows[0]!);
}

/** An export of the workspace, or null (unknown id, malformed id, or another workspace's). */
export async function findExport(db: Db, workspaceId: string, id: string): Promise<ExportRecord | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<ExportRow>(
    sql`SELECT * FROM exports WHERE id = ${id} AND workspace_id = ${workspaceId}`,
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/** By id alone: for the signed download link, whose signature already names the export. */
export async function findExportById(db: Db, id: string): Promise<ExportRecord | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<ExportRow>(sql`SELECT * FROM exports WHERE id = ${id}`);
  return rows[0] ? toRecord(rows[0]) : null;
}

/** Claims a queued (or a crashed running) export for a run; null when it is finished or gone. */
export async function startExport(db: Db, id: string, rowsTotal: number): Promise<ExportRecord | null> {
  const { rows } = await db.query<ExportRow>(
    sql`UPDATE exports SET status = 'running', rows_total = ${rowsTotal}, rows_written = 0
         WHERE id = ${id} AND status IN ('queued', 'running') RETURNING *`,
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function recordExportProgress(db: Db, id: string, rowsWritten: number): Promise<void> {
  await db.query(
    sql`UPDATE exports SET rows_written = ${rowsWritten} WHERE id = ${id} AND status = 'running'`,
  );
}

export async function completeExport(
  db: Db,
  id: string,
  done: { rowsWritten: number; bytes: number; storageKey: string },
): Promise<void> {
  await db.query(
    sql`UPDATE exports SET status = 'completed', rows_written = ${done.rowsWritten}, bytes = ${done.bytes},
          storage_key = ${done.storageKey}, finished_at = now()
         WHERE id = ${id}`,
  );
}

export async function failExport(db: Db, id: string, error: string): Promise<void> {
  await db.query(
    sql`UPDATE exports SET status = 'failed', error = ${error}, finished_at = now()
         WHERE id = ${id} AND status <> 'completed'`,
  );
}

/**
 * Withdraws an export no worker has started (still `queued`): true when its row was deleted,
 * false when it is gone or a worker already took it (its job evidently exists).
 */
export async function deleteQueuedExport(db: Db, id: string): Promise<boolean> {
  const { rowCount } = await db.query(sql`DELETE FROM exports WHERE id = ${id} AND status = 'queued'`);
  return (rowCount ?? 0) > 0;
}

/** Removes expired exports and returns their storage keys, for the caller to delete the files. */
export async function deleteExpiredExports(db: Db, now: Date, limit = 500): Promise<string[]> {
  const { rows } = await db.query<{ storage_key: string | null }>(
    sql`DELETE FROM exports
         WHERE id IN (SELECT id FROM exports WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${limit})
        RETURNING storage_key`,
  );
  return rows.flatMap((r) => (r.storage_key ? [r.storage_key] : []));
}

/**
 * Counts the cases a filter selects, stopping at `cap + 1`: enough to tell "over the
 * synchronous limit" without counting a million rows.
 */
export async function countCases(db: Db, workspaceId: string, f: ListFilters, cap: number): Promise<number> {
  const where = sql.join([sql`c.workspace_id = ${workspaceId}`, ...filterWhere('c', f, 'cases')], sql` AND `);
  const { rows } = await db.query<{ n: number }>(
    sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM cases c WHERE ${where} LIMIT ${cap + 1}) x`,
  );
  return rows[0]!.n;
}

/**
 * Rows per keyset page. 500 rather than 1,000 (or 5,000): the same CPU, and the worker's heap
 * grows far less during a long export (a 1 M-case job into S3 peaked ~36 MiB above the idle
 * worker, against ~108 MiB with 1,000; docs/operations.md#memory-of-a-worker, bench/README.md).
 * 200 halved that again but cost ~10% more CPU.
 */
const PAGE = 500;

/**
 * The selected cases, newest first, as keyset pages over `seq`: memory holds one page whatever
 * the export's size, and a consumer that stops (a client gone) ends the generator, so no
 * further page is read. Each case carries what the formats need from its newest sighting
 * (CVSS vector, file and line, package) and its EPSS (the highest of its CVEs).
 */
export async function* iterateExportCases(
  db: Db,
  workspaceId: string,
  f: ListFilters,
  onPage?: (rowsSoFar: number) => Promise<void>,
): AsyncGenerator<Case> {
  let cursor: string | null = null;
  let total = 0;
  for (;;) {
    const page = exportCasesQuery(workspaceId, f, cursor, PAGE);
    const { rows }: { rows: CaseRow[] } = await db.query<CaseRow>(page);
    for (const r of rows) yield toCase(r);
    total += rows.length;
    if (rows.length < PAGE) return;
    await onPage?.(total);
    cursor = rows[rows.length - 1]!.seq;
  }
}

/**
 * One keyset page of the export's cases, newest first: after `cursor` (a `seq`), at most `limit`.
 * Exported for the bench, whose baseline is PostgreSQL's own COPY of this very query.
 */
export function exportCasesQuery(
  workspaceId: string,
  f: ListFilters,
  cursor: string | null,
  limit: number,
): SqlFragment {
  const where = [sql`c.workspace_id = ${workspaceId}`, ...filterWhere('c', f, 'cases')];
  if (cursor !== null) where.push(sql`c.seq < ${cursor}::bigint`);
  return selectCases(
    sql`SELECT c.* FROM cases c WHERE ${sql.join(where, sql` AND `)} ORDER BY c.seq DESC LIMIT ${limit}`,
    sql`c.seq DESC`,
  );
}

/**
 * Which of `ids` name an export row (any status): an export's file lives in scan storage under
 * `<workspaceId>/<exportId>`, so the orphan sweep (`scans/storage-sweep.ts`) must keep it.
 */
export async function existingExportIds(db: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>(sql`SELECT id FROM exports WHERE id = ANY(${ids}::uuid[])`);
  return new Set(rows.map((r) => r.id));
}
