import { withTransaction, type Db, type Pool } from '../../db/pool.js';
import type { PlanName } from '../../db/entities/index.js';
import { isUuid } from '../../lib/ids.js';
import { filterSql, type ListFilters } from '../scans/list-filters.js';
import type { ScanTriageMode } from '../scans/scan-store.js';
import type { Priority, TriageRequest } from '../triage-engine/types.js';
import type { CaseRisk } from './case-risk.js';
import type { CaseTriageSource } from './case-triage-request.js';
import { findBatch, type BatchRow } from './batch-store.js';

/**
 * The SQL of case triage (DECISIONS §8, §10): which cases a scan or a selection names, with what
 * ranks them (`case-risk.ts`) and what their triage requests are built from
 * (`case-triage-request.ts`); case batches (batch records whose items name their case); and the
 * triage state of a scan (`scans.triage*`). A scan's triage batch has the scan's id, so
 * `GET /api/v1/triage/batch/<scanId>` shows its items.
 */

/** A case's risk now: KEV membership of any of its CVEs, their highest EPSS, its CVSS (else NVD's). */
const RISK_COLUMNS = `c.id, c.severity, c.first_seen,
  EXISTS (SELECT 1 FROM kev_entries k WHERE k.cve_id = ANY(c.cve_ids)) AS kev,
  (SELECT max(e.epss) FROM epss_scores e WHERE e.cve_id = ANY(c.cve_ids)) AS epss,
  coalesce(c.cvss_score, (SELECT max(s.base_score) FROM cvss_scores s WHERE s.cve_id = ANY(c.cve_ids))) AS cvss`;

interface RiskRow {
  id: string;
  severity: string;
  first_seen: Date;
  kev: boolean;
  epss: number | null;
  cvss: string | null;
}

const toRisk = (r: RiskRow): CaseRisk => ({
  id: r.id,
  kev: r.kev,
  epss: r.epss === null ? null : Number(r.epss),
  cvss: r.cvss === null ? null : Number(r.cvss),
  severity: r.severity,
  firstSeen: r.first_seen,
});

/**
 * The cases a completed scan asks to triage: `all` — every case it sighted; `new` — those it
 * created (their first scan) or reopened (a resolved case it saw again: its history says so).
 */
export async function scanCaseCandidates(
  db: Db,
  scan: { id: string; workspaceId: string },
  mode: 'new' | 'all',
): Promise<CaseRisk[]> {
  const { rows } = await db.query<RiskRow>(
    `SELECT ${RISK_COLUMNS}
       FROM cases c
      WHERE c.workspace_id = $2
        AND c.fingerprint IN (SELECT fingerprint FROM findings WHERE scan_id = $1)
        AND ($3 = 'all' OR c.first_scan_id = $1 OR EXISTS (
              SELECT 1 FROM case_status_history h
               WHERE h.case_id = c.id AND h.actor = 'scan:' || $1::text AND h.to_status = 'open'))`,
    [scan.id, scan.workspaceId, mode],
  );
  return rows.map(toRisk);
}

/**
 * The cases of a workspace a selection names: `caseIds` (ids of other workspaces and malformed
 * ones match nothing) or the list filters of `GET /api/v1/cases`. At most `max + 1` rows, so the
 * caller can tell a selection that is too large.
 */
export async function selectedCaseCandidates(
  db: Db,
  workspaceId: string,
  selection: { caseIds: readonly string[] } | { filters: ListFilters },
  max: number,
): Promise<CaseRisk[]> {
  const params: unknown[] = [workspaceId];
  const where =
    'caseIds' in selection
      ? [`c.id = ANY($${params.push(selection.caseIds.filter(isUuid))}::uuid[])`]
      : filterSql('c', selection.filters, params, 'cases');
  params.push(max + 1);
  const { rows } = await db.query<RiskRow>(
    `SELECT ${RISK_COLUMNS} FROM cases c WHERE c.workspace_id = $1 ${where.map((w) => `AND ${w}`).join(' ')}
      LIMIT $${params.length}`,
    params,
  );
  return rows.map(toRisk);
}

/**
 * What the triage requests of `caseIds` are built from, in their order: each case with its
 * newest sighting in `scanId` (a scan's triage) or in its last scan, and that scan's asset context.
 */
export async function caseRequestSources(
  db: Db,
  workspaceId: string,
  caseIds: readonly string[],
  scanId: string | null,
): Promise<(CaseTriageSource & { id: string })[]> {
  const { rows } = await db.query<{
    id: string;
    title: string;
    severity: string;
    cve_ids: string[];
    cvss_score: string | null;
    description: string | null;
    cvss_vector: string | null;
    asset: string | null;
    host: string | null;
    ip: string | null;
    fqdn: string | null;
    component: string | null;
    asset_name: string | null;
    asset_environment: string | null;
    asset_criticality: string | null;
    asset_internet_exposed: boolean | null;
  }>(
    `SELECT c.id, c.title, c.severity, c.cve_ids, c.cvss_score, c.asset, c.host, c.ip, c.fqdn, c.component,
            f.description, f.cvss_vector, s.asset_name, s.asset_environment, s.asset_criticality,
            s.asset_internet_exposed
       FROM unnest($2::uuid[]) WITH ORDINALITY AS k(id, ord)
       JOIN cases c ON c.id = k.id AND c.workspace_id = $1
       LEFT JOIN scans s ON s.id = coalesce($3::uuid, c.last_scan_id)
       LEFT JOIN LATERAL (
         SELECT f.description, coalesce(f.cvss_vector, f.cvss_v3_vector, f.cvss_v2_vector) AS cvss_vector
           FROM findings f
          WHERE f.workspace_id = c.workspace_id AND f.fingerprint = c.fingerprint AND f.scan_id = s.id
          ORDER BY f.record_index DESC LIMIT 1) f ON true
      ORDER BY k.ord`,
    [workspaceId, caseIds, scanId],
  );
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    severity: r.severity,
    cveIds: r.cve_ids,
    cvssScore: r.cvss_score,
    description: r.description,
    cvssVector: r.cvss_vector,
    asset: r.asset,
    host: r.host,
    ip: r.ip,
    fqdn: r.fqdn,
    component: r.component,
    context:
      r.asset_name === null &&
      r.asset_environment === null &&
      r.asset_criticality === null &&
      r.asset_internet_exposed === null
        ? null
        : {
            name: r.asset_name,
            environment: r.asset_environment,
            criticality: r.asset_criticality,
            internetExposed: r.asset_internet_exposed,
          },
  }));
}

/** A scan as its triage needs it: whose, billed to which key, in which mode, and its workspace's plan. */
export interface ScanForTriage {
  id: string;
  workspaceId: string;
  keyId: string | null;
  status: string;
  mode: ScanTriageMode;
  /** Null until the scan's triage was accepted (its cases chosen and their AI calls reserved). */
  requested: number | null;
  skipped: number | null;
  workspace: { plan: PlanName; trialEndsAt: Date | null };
}

export async function scanForTriage(db: Db, scanId: string): Promise<ScanForTriage | null> {
  const { rows } = await db.query<{
    id: string;
    workspace_id: string;
    key_id: string | null;
    status: string;
    triage: ScanTriageMode;
    triage_requested: number | null;
    triage_skipped: number | null;
    plan: PlanName;
    trial_ends_at: Date | null;
  }>(
    `SELECT s.id, s.workspace_id, s.key_id, s.status, s.triage, s.triage_requested, s.triage_skipped,
            w.plan, w.trial_ends_at
       FROM scans s JOIN workspaces w ON w.id = s.workspace_id WHERE s.id = $1`,
    [scanId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    keyId: r.key_id,
    status: r.status,
    mode: r.triage,
    requested: r.triage_requested,
    skipped: r.triage_skipped,
    workspace: { plan: r.plan, trialEndsAt: r.trial_ends_at },
  };
}

/** Records how many cases a scan's triage chose and skipped, once; false when already recorded. */
async function markScanTriage(
  db: Db,
  scanId: string,
  counts: { requested: number; skipped: number },
): Promise<boolean> {
  const res = await db.query(
    `UPDATE scans SET triage_requested = $2, triage_skipped = $3 WHERE id = $1 AND triage_requested IS NULL`,
    [scanId, counts.requested, counts.skipped],
  );
  return res.rowCount === 1;
}

/** A scan's triage that has nothing to run (no case, or no AI call left): its counts only. */
export async function recordScanTriageWithoutBatch(
  db: Db,
  scanId: string,
  counts: { requested: number; skipped: number },
): Promise<boolean> {
  return markScanTriage(db, scanId, counts);
}

/**
 * Stores a case batch: a batch record whose items carry their case, holding `reservationId`,
 * and — for a scan's triage — the scan's counts, in one transaction. False (nothing stored) when
 * the scan's triage was already recorded by another attempt.
 */
export async function createCaseBatch(
  pool: Pool,
  input: {
    id: string;
    workspaceId: string;
    keyId: string;
    items: readonly { caseId: string; request: TriageRequest }[];
    reservationId: string;
    at: Date;
    scan: { id: string; requested: number; skipped: number } | null;
  },
): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    if (input.scan && !(await markScanTriage(tx, input.scan.id, input.scan))) return false;
    await tx.query(
      `INSERT INTO triage_batches (id, workspace_id, key_id, status, total, reservation_id, created_at)
       VALUES ($1, $2, $3, 'queued', $4, $5, $6)`,
      [input.id, input.workspaceId, input.keyId, input.items.length, input.reservationId, input.at],
    );
    await tx.query(
      `INSERT INTO triage_batch_items (batch_id, index, status, request, case_id)
       SELECT $1, i - 1, 'queued', r, c FROM unnest($2::jsonb[], $3::uuid[]) WITH ORDINALITY AS t(r, c, i)`,
      [input.id, input.items.map((i) => JSON.stringify(i.request)), input.items.map((i) => i.caseId)],
    );
    return true;
  });
}

/** The triage batch of a scan (its id is the scan's), or null. */
export async function scanTriageBatch(
  db: Db,
  scan: { id: string; workspaceId: string },
): Promise<BatchRow | null> {
  return findBatch(db, scan.workspaceId, scan.id);
}

/**
 * What `GET /api/pipeline/scan/:id` shows of a scan's triage (DECISIONS §8), null when the upload
 * asked for none. `status`: `pending` until the scan completed and its cases were chosen;
 * `running` while its batch runs; `completed` once every chosen case was answered or failed (or
 * none was to be triaged); `cancelled` when the scan failed. `requested` counts the cases the
 * option named, `skippedForQuota` those left out because the month's AI calls ran out.
 */
export interface ScanTriageView {
  status: 'pending' | 'running' | 'completed' | 'cancelled';
  requested: number;
  answered: number;
  failed: number;
  skippedForQuota: number;
  /** The scan's triage batch (`GET /api/v1/triage/batch/:id`), when one runs. */
  batchId: string | null;
}

export async function scanTriageView(
  db: Db,
  scan: { id: string; workspaceId: string },
): Promise<ScanTriageView | null> {
  const { rows } = await db.query<{
    status: string;
    triage: ScanTriageMode;
    triage_requested: number | null;
    triage_skipped: number | null;
    batch_id: string | null;
    completed: number | null;
    failed: number | null;
    finished_at: Date | null;
  }>(
    `SELECT s.status, s.triage, s.triage_requested, s.triage_skipped, b.id AS batch_id, b.completed, b.failed,
            b.finished_at
       FROM scans s LEFT JOIN triage_batches b ON b.id = s.id AND b.workspace_id = s.workspace_id
      WHERE s.id = $1 AND s.workspace_id = $2`,
    [scan.id, scan.workspaceId],
  );
  const r = rows[0];
  if (!r || r.triage === 'none') return null;
  const counts = {
    requested: r.triage_requested ?? 0,
    answered: r.completed ?? 0,
    failed: r.failed ?? 0,
    skippedForQuota: r.triage_skipped ?? 0,
    batchId: r.batch_id,
    byPriority: {},
  };
  if (r.status === 'failed') return { status: 'cancelled', ...counts };
  if (r.triage_requested === null) return { status: 'pending', ...counts };
  if (r.batch_id !== null && r.finished_at === null) return { status: 'running', ...counts };
  if (r.batch_id !== null && (r.completed ?? 0) > 0)
    counts.byPriority = await answeredByPriority(db, r.batch_id);
  return { status: 'completed', ...counts };
}

/** The cases a finished case-triage batch answered, counted by their current priority. */
async function answeredByPriority(db: Db, batchId: string): Promise<Partial<Record<Priority, number>>> {
  const { rows } = await db.query<{ priority: Priority; n: number }>(
    `SELECT c.priority, count(*)::int AS n
       FROM triage_batch_items i JOIN cases c ON c.id = i.case_id
      WHERE i.batch_id = $1 AND i.status = 'completed' AND c.priority IS NOT NULL
      GROUP BY c.priority`,
    [batchId],
  );
  return Object.fromEntries(rows.map((r) => [r.priority, r.n]));
}
