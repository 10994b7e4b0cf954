import type { Db } from '../../db/pool.js';
import { sql, type SqlFragment } from '../../db/sql.js';
import { isUuid } from '../../lib/ids.js';
import { filterWhere, kevColumnSql, type ListFilters } from '../cases/list-filters.js';
import type { ExportCase, ExportCaseStatus, ExportSeverity, ExportTriage } from './export-case.js';
import type { ExportFormat } from './formats.js';

/** The only module that names the `exports` table (and reads cases for an export). */

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

interface ExportCaseRow {
  seq: string;
  id: string;
  fingerprint: string;
  title: string;
  severity: ExportSeverity;
  status: ExportCaseStatus;
  scanner: string;
  rule_id: string | null;
  cve_ids: string[];
  cwe_ids: string[];
  cvss_score: number | null;
  cvss_vector: string | null;
  asset: string | null;
  host: string | null;
  ip: string | null;
  fqdn: string | null;
  component: string | null;
  component_version: string | null;
  purl: string | null;
  file: string | null;
  line: number | null;
  port: number | null;
  protocol: string | null;
  kev: boolean;
  epss: number | null;
  first_seen: string;
  last_seen: string;
  first_scan_id: string;
  last_scan_id: string;
  sightings: number;
  created_at: string;
  updated_at: string;
  priority: ExportSeverity | null;
  recommended_action: string | null;
  reasoning: string | null;
  confidence_score: number | null;
  severity_override: ExportSeverity | null;
  model: string | null;
  triaged_at: string | null;
  policy_version: string | null;
  triage_stale: boolean;
}

/** A timestamptz as the ISO 8601 text `Date.toISOString()` writes (UTC, milliseconds). */
const ISO = (col: SqlFragment): SqlFragment =>
  sql`to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Rows per keyset page. 1,000 rather than 5,000: the same speed, and peak RSS ~175 MB instead of
 * ~270 MB at 1 M cases (bench/exports/export-throughput.ts, bench/README.md).
 */
const PAGE = 1_000;

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
): AsyncGenerator<ExportCase> {
  let cursor: string | null = null;
  let total = 0;
  for (;;) {
    const page = exportCasesQuery(workspaceId, f, cursor, PAGE);
    const { rows }: { rows: ExportCaseRow[] } = await db.query<ExportCaseRow>(page);
    for (const r of rows) yield toExportCase(r);
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
  // Arrays as JSON, times as ISO text and scores as float8: pg's JSON.parse and plain
  // strings cost a fraction of its text-array and Date parsers (measured in bench/exports).
  return sql`SELECT c.seq, c.id, c.fingerprint, c.title, c.severity, c.status, c.scanner, c.rule_id,
              array_to_json(c.cve_ids) AS cve_ids, array_to_json(c.cwe_ids) AS cwe_ids, c.cvss_score::float8 AS cvss_score,
              c.asset, c.host, c.ip, c.fqdn, c.component, c.port, c.protocol,
              ${ISO(sql`c.first_seen`)} AS first_seen, ${ISO(sql`c.last_seen`)} AS last_seen,
              c.first_scan_id, c.last_scan_id, c.sightings, ${ISO(sql`c.created_at`)} AS created_at,
              ${ISO(sql`c.updated_at`)} AS updated_at,
              c.priority, c.recommended_action, c.reasoning, c.confidence_score, c.severity_override, c.model,
              ${ISO(sql`c.triaged_at`)} AS triaged_at, c.policy_version, c.triage_stale,
              ${kevColumnSql('c')},
              (SELECT max(e.epss) FROM epss_scores e WHERE e.cve_id = ANY(c.cve_ids)) AS epss,
              lf.cvss_vector, lf.component_version, lf.purl, lf.file, lf.line
       FROM cases c
       LEFT JOIN LATERAL (
         SELECT f.cvss_vector, f.component_version, f.purl, f.file, f.line FROM findings f
         WHERE f.workspace_id = c.workspace_id AND f.fingerprint = c.fingerprint AND f.scan_id = c.last_scan_id
         LIMIT 1) lf ON true
       WHERE ${sql.join(where, sql` AND `)}
       ORDER BY c.seq DESC LIMIT ${limit}`;
}

function toExportCase(r: ExportCaseRow): ExportCase {
  return {
    id: r.id,
    fingerprint: r.fingerprint,
    title: r.title,
    severity: r.severity,
    status: r.status,
    scanner: r.scanner,
    ruleId: r.rule_id,
    cveIds: r.cve_ids,
    cweIds: r.cwe_ids,
    cvssScore: r.cvss_score,
    cvssVector: r.cvss_vector,
    asset: r.asset,
    host: r.host,
    ip: r.ip,
    fqdn: r.fqdn,
    component: r.component,
    componentVersion: r.component_version,
    purl: r.purl,
    file: r.file,
    line: r.line,
    port: r.port,
    protocol: r.protocol,
    kev: r.kev,
    epss: r.epss,
    firstSeen: r.first_seen,
    lastSeen: r.last_seen,
    firstScanId: r.first_scan_id,
    lastScanId: r.last_scan_id,
    sightings: r.sightings,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    triage: triageOf(r),
    triageStale: r.triage_stale,
  };
}

/** The case's current triage (m011 keeps its columns all set or all null). */
function triageOf(r: ExportCaseRow): ExportTriage | null {
  if (r.triaged_at === null) return null;
  return {
    priority: r.priority!,
    recommendedAction: r.recommended_action!,
    reasoning: r.reasoning!,
    confidenceScore: r.confidence_score!,
    severityOverride: r.severity_override,
    model: r.model!,
    triagedAt: r.triaged_at,
    policyVersion: r.policy_version!,
  };
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
