import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import type { ScanFormat } from '../../parsers/index.js';
import { seqCursor, seqPage, type Page } from '../../lib/cursor.js';
import { isUuid } from '../../lib/ids.js';

/**
 * The way to the `scans` table: a scan's row from upload to its end, mapped to camelCase here.
 * The ingest's set-based writes (findings, evidence, cases, counters) are in `ingest-store.ts`.
 *
 * Glossary:
 * - scan: one uploaded file and the state of its ingestion (`queued` → `parsing` → `completed`
 *   or `failed`).
 * - counts: findings stored, `new` cases this scan created, `duplicate` findings that were
 *   sightings of a case that already existed (or appeared more than once in the file).
 */
export type ScanStatus = 'queued' | 'parsing' | 'completed' | 'failed';

/**
 * Upload option `triage` (docs/cases.md#case-triage): after the scan completes, triage none of its cases, the
 * cases it created or reopened (`new`), or every case it sighted (`all`). See `domain/triage/case-triage.ts`.
 */
export const SCAN_TRIAGE_MODES = ['none', 'new', 'all'] as const;
export type ScanTriageMode = (typeof SCAN_TRIAGE_MODES)[number];

export interface ScanError {
  code: string;
  message: string;
  line: number | null;
  column: number | null;
}

/** A `scans` row as PostgreSQL returns it: private to the scans store, mapped by {@link toScan}. */
interface ScanRow {
  id: string;
  seq: string;
  workspace_id: string;
  key_id: string | null;
  name: string | null;
  format: ScanFormat;
  status: ScanStatus;
  bytes: string;
  bytes_parsed: string;
  sha256: string;
  storage_path: string;
  content_encoding: string | null;
  idempotency_key: string | null;
  asset_name: string | null;
  asset_environment: string | null;
  asset_criticality: string | null;
  asset_internet_exposed: boolean | null;
  findings_count: number;
  new_cases: number;
  duplicates: number;
  resolve_missing: boolean;
  resolved_cases: number;
  reopened_cases: number;
  by_severity: Record<string, number>;
  notes: string[];
  error: ScanError | null;
  attempts: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  file_deleted_at: Date | null;
}

/** A scan as the domain, the routes and the worker see it. */
export interface Scan {
  id: string;
  /** The insertion sequence (bigint as text): the keyset of {@link listScans}. */
  seq: string;
  workspaceId: string;
  keyId: string | null;
  name: string | null;
  format: ScanFormat;
  status: ScanStatus;
  /** bigint as text, as stored. */
  bytes: string;
  /** bigint as text, as stored. */
  bytesParsed: string;
  sha256: string;
  storagePath: string;
  contentEncoding: string | null;
  idempotencyKey: string | null;
  asset: AssetContext;
  findingsCount: number;
  newCases: number;
  duplicates: number;
  /** The upload's `resolveMissing` (docs/ingestion.md#rescans). */
  resolveMissing: boolean;
  /** Cases of its scope it no longer saw and resolved. */
  resolvedCases: number;
  /** Resolved cases it saw again and reopened. */
  reopenedCases: number;
  bySeverity: Record<string, number>;
  notes: string[];
  error: ScanError | null;
  attempts: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** When the workspace's retention removed the raw file (docs/operations.md#retention). */
  fileDeletedAt: Date | null;
}

/** Maps a `scans` row (`RETURNING *` or `SELECT *`) to a {@link Scan}. */
function toScan(r: ScanRow): Scan {
  return {
    id: r.id,
    seq: r.seq,
    workspaceId: r.workspace_id,
    keyId: r.key_id,
    name: r.name,
    format: r.format,
    status: r.status,
    bytes: r.bytes,
    bytesParsed: r.bytes_parsed,
    sha256: r.sha256,
    storagePath: r.storage_path,
    contentEncoding: r.content_encoding,
    idempotencyKey: r.idempotency_key,
    asset: {
      name: r.asset_name,
      environment: r.asset_environment,
      criticality: r.asset_criticality,
      internetExposed: r.asset_internet_exposed,
    },
    findingsCount: r.findings_count,
    newCases: r.new_cases,
    duplicates: r.duplicates,
    resolveMissing: r.resolve_missing,
    resolvedCases: r.resolved_cases,
    reopenedCases: r.reopened_cases,
    bySeverity: r.by_severity,
    notes: r.notes,
    error: r.error,
    attempts: r.attempts,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    fileDeletedAt: r.file_deleted_at ?? null,
  };
}

export interface AssetContext {
  name: string | null;
  environment: string | null;
  criticality: string | null;
  internetExposed: boolean | null;
}

export interface NewScan {
  id: string;
  workspaceId: string;
  keyId: string | null;
  name: string | null;
  format: ScanFormat;
  bytes: number;
  sha256: string;
  storagePath: string;
  contentEncoding: string | null;
  idempotencyKey: string | null;
  asset: AssetContext;
  /** @defaultValue `none` */
  triage?: ScanTriageMode;
  /** Resolve the cases of its scope it does not see (docs/ingestion.md#rescans). @defaultValue true */
  resolveMissing?: boolean;
}

/** Claims a scan for parsing; null when it is already completed or failed (nothing to do). */
export async function startParsing(db: Db, scanId: string): Promise<Scan | null> {
  const { rows } = await db.query<ScanRow>(
    sql`UPDATE scans SET status = 'parsing', started_at = coalesce(started_at, now()), attempts = attempts + 1
         WHERE id = ${scanId} AND status IN ('queued', 'parsing') RETURNING *`,
  );
  return rows[0] ? toScan(rows[0]) : null;
}

/** Inserts a scan; returns null when the workspace already used `idempotencyKey`. */
export async function insertScan(db: Db, s: NewScan): Promise<Scan | null> {
  const { rows } = await db.query<ScanRow>(
    sql`INSERT INTO scans (id, workspace_id, key_id, name, format, bytes, sha256, storage_path, content_encoding,
                        idempotency_key, asset_name, asset_environment, asset_criticality, asset_internet_exposed, triage,
                        resolve_missing)
     VALUES (${s.id}, ${s.workspaceId}, ${s.keyId}, ${s.name}, ${s.format}, ${s.bytes}, ${s.sha256},
             ${s.storagePath}, ${s.contentEncoding}, ${s.idempotencyKey}, ${s.asset.name}, ${s.asset.environment},
             ${s.asset.criticality}, ${s.asset.internetExposed}, ${s.triage ?? 'none'}, ${s.resolveMissing ?? true})
     ON CONFLICT (workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
     RETURNING *`,
  );
  return rows[0] ? toScan(rows[0]) : null;
}

/**
 * Withdraws a scan no worker has claimed (still `queued`): deletes its row and returns its storage
 * path, or null when it is gone or a worker already took it (then its job evidently exists).
 */
export async function deleteQueuedScan(db: Db, id: string): Promise<string | null> {
  const { rows } = await db.query<{ storage_path: string }>(
    sql`DELETE FROM scans WHERE id = ${id} AND status = 'queued' RETURNING storage_path`,
  );
  return rows[0]?.storage_path ?? null;
}

export async function scanByIdempotencyKey(db: Db, workspaceId: string, key: string): Promise<Scan | null> {
  const { rows } = await db.query<ScanRow>(
    sql`SELECT * FROM scans WHERE workspace_id = ${workspaceId} AND idempotency_key = ${key}`,
  );
  return rows[0] ? toScan(rows[0]) : null;
}

/** The scan if it exists in this workspace; malformed ids and other workspaces' ids are null alike. */
export async function getScan(db: Db, workspaceId: string, id: string): Promise<Scan | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<ScanRow>(
    sql`SELECT * FROM scans WHERE id = ${id} AND workspace_id = ${workspaceId}`,
  );
  return rows[0] ? toScan(rows[0]) : null;
}

/** Newest first, keyset-paged on the insertion sequence. */
export async function listScans(
  db: Db,
  workspaceId: string,
  q: { status?: ScanStatus; limit: number; cursor?: string },
): Promise<Page<Scan>> {
  const where = [sql`workspace_id = ${workspaceId}`];
  if (q.status) where.push(sql`status = ${q.status}`);
  if (q.cursor) where.push(sql`seq < ${seqCursor(q.cursor)}::bigint`);
  const { rows } = await db.query<ScanRow>(
    sql`SELECT * FROM scans WHERE ${sql.join(where, sql` AND `)} ORDER BY seq DESC LIMIT ${q.limit + 1}`,
  );
  return seqPage(rows.map(toScan), q.limit);
}

/** Which of `ids` name a scan row (any status): the owners of stored files (`storage-sweep.ts`). */
export async function existingScanIds(db: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>(sql`SELECT id FROM scans WHERE id = ANY(${ids}::uuid[])`);
  return new Set(rows.map((r) => r.id));
}

/**
 * Locks a scan's row until the transaction ends (`FOR UPDATE`) and reads its status and stored
 * file; null when there is no such scan. The one lock a scan's end takes (scan-failure.ts,
 * `completeScan`), so it leaves `queued`/`parsing` once.
 */
export async function lockScan(
  db: Db,
  scanId: string,
): Promise<{ status: ScanStatus; storagePath: string } | null> {
  const { rows } = await db.query<{ status: ScanStatus; storagePath: string }>(
    sql`SELECT status, storage_path AS "storagePath" FROM scans WHERE id = ${scanId} FOR UPDATE`,
  );
  return rows[0] ?? null;
}

/** Records a scan's end as `failed` with `error`, its counters zeroed (the caller holds its lock). */
export async function markScanFailed(db: Db, scanId: string, error: ScanError): Promise<void> {
  await db.query(sql`
    UPDATE scans SET status = 'failed', error = ${JSON.stringify(error)}, findings_count = 0, new_cases = 0,
                     duplicates = 0, by_severity = '{}', finished_at = now()
     WHERE id = ${scanId}`);
}

/** The ids of scans `queued` or `parsing` since before `before`, oldest first. */
export async function unfinishedScanIds(db: Db, before: Date, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(sql`
    SELECT id FROM scans WHERE status IN ('queued', 'parsing') AND created_at < ${before}
     ORDER BY created_at LIMIT ${limit}`);
  return rows.map((r) => r.id);
}

/**
 * Marks up to `limit` completed scans whose raw file is past their workspace's retention
 * (`workspaces.scan_file_retention_days`, read here: the retention is the workspace's setting,
 * the files the scans') as `file_deleted_at = now`, skipping scans another transaction holds,
 * and returns their storage paths for the caller to remove before it commits.
 */
export async function claimExpiredScanFiles(db: Db, now: Date, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ storage_path: string }>(
    sql`UPDATE scans SET file_deleted_at = ${now}
         WHERE id IN (
           SELECT s.id FROM scans s JOIN workspaces w ON w.id = s.workspace_id
            WHERE w.scan_file_retention_days IS NOT NULL
              AND s.status = 'completed' AND s.file_deleted_at IS NULL
              AND s.created_at <= ${now}::timestamptz - make_interval(days => w.scan_file_retention_days)
            ORDER BY s.created_at
            LIMIT ${limit}
            FOR UPDATE OF s SKIP LOCKED)
        RETURNING storage_path`,
  );
  return rows.map((r) => r.storage_path);
}
