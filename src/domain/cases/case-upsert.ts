import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { vulnKeysSql } from './case-duplicates.js';
import { findingScopeSql } from './case-scope.js';
import { announcementAfterSql, kevDueSql, openDueSql } from './case-due-dates.js';
import { getSlaPolicy } from './sla-policy-store.js';

/**
 * Cases from a completed scan's stored findings: one case per (workspace, fingerprint), created
 * on its first sighting and updated on every later one; a resolved case seen again is reopened,
 * with the change in its history (its actor `scan:<scanId>`, which a scan's triage of new cases
 * reads back). Runs inside the scan's completion transaction (`completeScan` of
 * `domain/scans/ingest-store.ts`), so cases and the scan's counters commit together.
 */

/**
 * Reopens the resolved cases `scanId` sighted and upserts a case for each fingerprint of its
 * findings, in `tx` (a transaction: it sets a local `work_mem`); each case takes the scope of
 * this sighting (`case-scope.ts`, `hostless` for a finding without a host). Returns how many
 * cases it created and how many it reopened.
 */
export async function upsertScanCases(
  tx: Db,
  scanId: string,
  workspaceId: string,
  hostless: string | null = null,
): Promise<{ created: number; reopened: number }> {
  const reopen = await tx.query(
    sql`WITH seen AS (SELECT DISTINCT fingerprint FROM findings WHERE scan_id = ${scanId}),
     reopened AS (
       UPDATE cases c SET status = 'open', updated_at = now() FROM seen
       WHERE c.workspace_id = ${workspaceId} AND c.fingerprint = seen.fingerprint AND c.status = 'resolved'
       RETURNING c.id
     )
     INSERT INTO case_status_history (case_id, from_status, to_status, actor, note)
     SELECT id, 'resolved', 'open', 'scan:' || ${scanId}::text, 'Seen again by a scan.' FROM reopened`,
  );
  // The basis of the due dates (docs/cases.md#due-dates-and-sla): the scan's asset, the CVEs' KEV due date.
  const exposed = sql`coalesce((SELECT s.asset_internet_exposed OR s.asset_criticality IN ('HIGH', 'CRITICAL')
    FROM scans s WHERE s.id = ${scanId}), false)`;
  // An announced breach whose due date this sighting moves later is a new breach when it passes.
  const movedDue = openDueSql(
    {
      urgency: sql`(CASE WHEN cases.triaged_at IS NULL THEN EXCLUDED.severity ELSE cases.priority END)`,
      exposed: sql`EXCLUDED.sla_exposed`,
      firstSeen: sql`cases.first_seen`,
      kevDueAt: sql`EXCLUDED.kev_due_at`,
    },
    await getSlaPolicy(tx, workspaceId),
  );
  // One sort of the scan's narrow case columns, in memory: the window shares DISTINCT ON's order.
  await tx.query(sql`SET LOCAL work_mem = '64MB'`);
  // Ordered by fingerprint so concurrent completions of one workspace lock cases in the same order.
  const upsert = await tx.query<{ created: number }>(
    sql`WITH upserted AS (
     INSERT INTO cases (workspace_id, fingerprint, title, severity, scanner, rule_id, cve_ids, cwe_ids, cvss_score,
                        asset, host, ip, fqdn, component, port, protocol, first_scan_id, last_scan_id,
                        first_seen, last_seen, sightings, scope, aliases, vuln_keys, sla_exposed, kev_due_at)
     SELECT d.workspace_id, d.fingerprint, d.title, d.severity, d.scanner, d.rule_id, d.cve_ids, d.cwe_ids,
            d.cvss_score, d.asset, d.host, d.ip, d.fqdn, d.component, d.port, d.protocol, d.scan_id, d.scan_id,
            now(), now(), d.sightings, ${findingScopeSql(hostless)}, d.aliases,
            ${vulnKeysSql(sql`(SELECT asset_name FROM scans WHERE id = ${scanId})`)}, ${exposed},
            CASE WHEN cardinality(d.cve_ids) > 0 THEN ${kevDueSql(sql`d.cve_ids`)} END
     FROM (
       SELECT DISTINCT ON (fingerprint) workspace_id, fingerprint, title, severity, scanner, rule_id, cve_ids, cwe_ids,
              cvss_score, asset, host, ip, fqdn, component, component_version, purl, port, protocol, scan_id, aliases,
              count(*) OVER (PARTITION BY fingerprint ORDER BY record_index DESC
                             ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS sightings
       FROM findings WHERE scan_id = ${scanId}
       ORDER BY fingerprint, record_index DESC) d
     ORDER BY d.fingerprint
     ON CONFLICT (workspace_id, fingerprint) DO UPDATE SET
       title = EXCLUDED.title, severity = EXCLUDED.severity, cve_ids = EXCLUDED.cve_ids, cwe_ids = EXCLUDED.cwe_ids,
       cvss_score = EXCLUDED.cvss_score, last_scan_id = EXCLUDED.last_scan_id, last_seen = EXCLUDED.last_seen,
       sightings = cases.sightings + EXCLUDED.sightings, scope = EXCLUDED.scope, aliases = EXCLUDED.aliases,
       vuln_keys = EXCLUDED.vuln_keys, sla_exposed = EXCLUDED.sla_exposed, kev_due_at = EXCLUDED.kev_due_at,
       sla_breach_due_at = ${announcementAfterSql(sql`cases.sla_breach_due_at`, movedDue)},
       updated_at = now()
     RETURNING xmax = 0 AS created)
     SELECT count(*) FILTER (WHERE created)::int AS created FROM upserted`,
  );
  return { created: upsert.rows[0]!.created, reopened: reopen.rowCount ?? 0 };
}
