import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Pool, Queryable } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import type { Finding, FindingAsset } from '../../parsers/index.js';
import type { ScanError, ScanRow } from './scan-records.js';

/**
 * Persistence of a scan's findings (DECISIONS §8, §10), in three set-based steps:
 *
 * 1. {@link insertFindingBatch} per parser batch: the batch is COPYed into a session-local
 *    staging table, then moved into findings and evidence by one INSERT ... SELECT keyed by
 *    (scan_id, record_index) with ON CONFLICT DO NOTHING, in one transaction. A retried or
 *    crashed job re-parses from the start and re-inserts; rows already stored are skipped.
 * 2. {@link completeScan} once the file is parsed: in one transaction, upsert the cases by
 *    (workspace, fingerprint), derive every counter from the stored findings, and mark the scan
 *    completed. Counters are never incremented per batch, so a half-counted scan cannot exist,
 *    and findings are not rewritten (they reach their case through the fingerprint).
 * 3. {@link failScan} when the file is broken: the scan's staged rows are deleted and the
 *    error (code, message, line, column) is recorded.
 *
 * Readers only show findings and evidence of completed scans.
 */

/** Longest text kept per evidence field; 4,000 characters stay under the column's 16 KiB check. */
const MAX_EVIDENCE_CHARS = 4_000;

const bound = (s: string | null): string | null =>
  s === null ? null : s.length > MAX_EVIDENCE_CHARS ? `${s.slice(0, MAX_EVIDENCE_CHARS)}…[truncated]` : s;

/** The label shown and filtered on as a finding's (and case's) asset. */
export function assetLabel(a: FindingAsset): string | null {
  if (a.host) return a.host;
  if (a.fqdn) return a.fqdn;
  if (a.ip) return a.ip;
  if (a.purl) return a.purl;
  if (a.component) return a.componentVersion ? `${a.component}@${a.componentVersion}` : a.component;
  return a.file;
}

function row(f: Finding) {
  return {
    record_index: f.recordIndex,
    fingerprint: f.fingerprint,
    scanner: f.scanner,
    rule_id: f.ruleId,
    title: f.title,
    severity: f.severity,
    cve_ids: f.cveIds,
    cwe_ids: f.cweIds,
    cvss_score: f.cvssScore,
    cvss_vector: f.cvssVector,
    cvss_v3_score: f.cvssV3Score,
    cvss_v3_vector: f.cvssV3Vector,
    cvss_v2_score: f.cvssV2Score,
    cvss_v2_vector: f.cvssV2Vector,
    description: f.description,
    solution: f.solution,
    asset: assetLabel(f.asset),
    host: f.asset.host,
    ip: f.asset.ip,
    fqdn: f.asset.fqdn,
    os: f.asset.os,
    component: f.asset.component,
    component_version: f.asset.componentVersion,
    purl: f.asset.purl,
    file: f.asset.file,
    line: f.asset.line,
    port: f.port,
    protocol: f.protocol,
    exploit_available: f.exploitAvailable,
    confidence: f.confidence,
    suppressed: f.suppressed,
    raw_excerpt: bound(f.rawExcerpt) ?? '',
    scanner_output: bound(f.evidence),
  };
}

/** Staging columns, in COPY order; every finding column plus the evidence texts. */
const STAGE_COLUMNS = `record_index int, fingerprint text, scanner text, rule_id text, title text, severity text,
  cve_ids text[], cwe_ids text[], cvss_score numeric, cvss_vector text, cvss_v3_score numeric, cvss_v3_vector text,
  cvss_v2_score numeric, cvss_v2_vector text, description text, solution text, asset text, host text, ip text,
  fqdn text, os text, component text, component_version text, purl text, file text, line int, port int,
  protocol text, exploit_available boolean, confidence int, suppressed boolean, raw_excerpt text, scanner_output text`;

const FINDING_COLUMNS = `record_index, fingerprint, scanner, rule_id, title, severity, cve_ids, cwe_ids, cvss_score,
  cvss_vector, cvss_v3_score, cvss_v3_vector, cvss_v2_score, cvss_v2_vector, description, solution, asset, host, ip,
  fqdn, os, component, component_version, purl, file, line, port, protocol, exploit_available, confidence, suppressed`;

/** One CSV field: NULL is an empty unquoted field, everything else is quoted (so '' stays ''). */
function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s: string;
  if (Array.isArray(v)) s = `{${v.map((x) => `"${String(x).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;
  else s = String(v);
  if (s.includes('\u0000')) s = s.replaceAll('\u0000', '');
  return `"${s.replaceAll('"', '""')}"`;
}

function csvLine(f: Finding): string {
  const r = row(f);
  return `${Object.values(r).map(csvField).join(',')}\n`;
}

/**
 * Stores one batch of findings with their evidence. Idempotent per (scan, record index).
 * COPY into an ON COMMIT DELETE ROWS temporary table is the fast path into PostgreSQL (see
 * bench/ingest); the INSERT ... SELECT from it keeps ON CONFLICT, which COPY alone cannot.
 * @returns how many findings were new (0 when the batch had been stored before a crash).
 */
export async function insertFindingBatch(pool: Pool, scan: { id: string; workspaceId: string }, findings: Finding[]): Promise<number> {
  if (findings.length === 0) return 0;
  return withTransaction(pool, async (tx) => {
    // Safe without waiting for the WAL flush: a batch lost to a database crash is re-inserted by
    // the retried job, and completeScan's synchronous commit flushes every earlier batch first.
    await tx.query(`SET LOCAL synchronous_commit = off`);
    await tx.query(`CREATE TEMP TABLE IF NOT EXISTS finding_stage (${STAGE_COLUMNS}) ON COMMIT DELETE ROWS`);
    await pipeline(Readable.from(findings.map(csvLine)), tx.query(copyFrom(`COPY finding_stage FROM STDIN WITH (FORMAT csv)`)));
    const { rowCount } = await tx.query(
      `WITH ins AS (
         INSERT INTO findings (scan_id, workspace_id, ${FINDING_COLUMNS})
         SELECT $1, $2, ${FINDING_COLUMNS} FROM finding_stage
         ON CONFLICT (scan_id, record_index) DO NOTHING
         RETURNING id, record_index
       )
       INSERT INTO evidence (finding_id, scan_id, raw_excerpt, scanner_output)
       SELECT ins.id, $1, s.raw_excerpt, s.scanner_output FROM ins JOIN finding_stage s USING (record_index)`,
      [scan.id, scan.workspaceId],
    );
    return rowCount ?? 0;
  });
}

/** Claims a scan for parsing; null when it is already completed or failed (nothing to do). */
export async function startParsing(db: Queryable, scanId: string): Promise<ScanRow | null> {
  const { rows } = await db.query<ScanRow>(
    `UPDATE scans SET status = 'parsing', started_at = coalesce(started_at, now()), attempts = attempts + 1
     WHERE id = $1 AND status IN ('queued', 'parsing') RETURNING *`,
    [scanId],
  );
  return rows[0] ?? null;
}

/** Progress while parsing: findings stored so far and bytes read (when known). */
export async function recordProgress(db: Queryable, scanId: string, findingsSoFar: number, bytesParsed: number | null): Promise<void> {
  await db.query(
    `UPDATE scans SET findings_count = greatest(findings_count, $2),
                      bytes_parsed = CASE WHEN $3::bigint IS NULL THEN bytes_parsed ELSE least(bytes, greatest(bytes_parsed, $3::bigint)) END
     WHERE id = $1 AND status = 'parsing'`,
    [scanId, findingsSoFar, bytesParsed],
  );
}

/**
 * The final step: cases and counters derived from the scan's stored findings,
 * all in one transaction with the status change. Resolved cases seen again are reopened, with
 * the change in their history. Returns false when another attempt already finished the scan.
 */
export async function completeScan(pool: Pool, scanId: string, result: { bytes: number; notes: string[] }): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ workspace_id: string }>(
      `SELECT workspace_id FROM scans WHERE id = $1 AND status = 'parsing' FOR UPDATE`,
      [scanId],
    );
    const ws = rows[0]?.workspace_id;
    if (!ws) return false;
    await tx.query(
      `WITH seen AS (SELECT DISTINCT fingerprint FROM findings WHERE scan_id = $1),
       reopened AS (
         UPDATE cases c SET status = 'open', updated_at = now() FROM seen
         WHERE c.workspace_id = $2 AND c.fingerprint = seen.fingerprint AND c.status = 'resolved'
         RETURNING c.id
       )
       INSERT INTO case_status_history (case_id, from_status, to_status, actor, note)
       SELECT id, 'resolved', 'open', 'scan:' || $1::text, 'Seen again by a scan.' FROM reopened`,
      [scanId, ws],
    );
    // Ordered by fingerprint so concurrent completions of one workspace lock cases in the same order.
    await tx.query(
      `INSERT INTO cases (workspace_id, fingerprint, title, severity, scanner, rule_id, cve_ids, cwe_ids, cvss_score,
                          asset, host, ip, fqdn, component, port, protocol, first_scan_id, last_scan_id,
                          first_seen, last_seen, sightings)
       SELECT workspace_id, fingerprint, title, severity, scanner, rule_id, cve_ids, cwe_ids, cvss_score,
              asset, host, ip, fqdn, component, port, protocol, scan_id, scan_id, now(), now(), n
       FROM (
         SELECT DISTINCT ON (fingerprint) *, count(*) OVER (PARTITION BY fingerprint) AS n
         FROM findings WHERE scan_id = $1 ORDER BY fingerprint, record_index DESC
       ) latest
       ORDER BY fingerprint
       ON CONFLICT (workspace_id, fingerprint) DO UPDATE SET
         title = EXCLUDED.title, severity = EXCLUDED.severity, cve_ids = EXCLUDED.cve_ids, cwe_ids = EXCLUDED.cwe_ids,
         cvss_score = EXCLUDED.cvss_score, last_scan_id = EXCLUDED.last_scan_id, last_seen = EXCLUDED.last_seen,
         sightings = cases.sightings + EXCLUDED.sightings, updated_at = now()`,
      [scanId],
    );
    await tx.query(
      `WITH total AS (SELECT count(*)::int AS n FROM findings WHERE scan_id = $1),
       created AS (SELECT count(*)::int AS n FROM cases WHERE first_scan_id = $1),
       sev AS (SELECT coalesce(jsonb_object_agg(severity, n), '{}') AS j
               FROM (SELECT severity, count(*)::int AS n FROM findings WHERE scan_id = $1 GROUP BY severity) s)
       UPDATE scans SET status = 'completed', findings_count = total.n, new_cases = created.n,
                        duplicates = total.n - created.n, by_severity = sev.j, bytes_parsed = $2,
                        notes = $3, error = NULL, finished_at = now()
       FROM total, created, sev WHERE scans.id = $1`,
      [scanId, result.bytes, result.notes],
    );
    return true;
  });
}

/** Ends a scan as failed and removes every row it staged: nothing half-stored stays behind. */
export async function failScan(pool: Pool, scanId: string, error: ScanError): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const { rowCount } = await tx.query(`SELECT 1 FROM scans WHERE id = $1 AND status <> 'completed' FOR UPDATE`, [scanId]);
    if (!rowCount) return;
    await tx.query(`DELETE FROM evidence WHERE scan_id = $1`, [scanId]);
    await tx.query(`DELETE FROM findings WHERE scan_id = $1`, [scanId]);
    await tx.query(
      `UPDATE scans SET status = 'failed', error = $2, findings_count = 0, new_cases = 0, duplicates = 0,
                        by_severity = '{}', finished_at = now() WHERE id = $1`,
      [scanId, JSON.stringify(error)],
    );
  });
}
