import type { Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { dueAtSql } from '../cases/case-due-dates.js';
import type { DeliveryCase } from './types.js';

/**
 * The case as a delivery renders it: a read over `cases` and what enriches it (KEV, EPSS, the
 * scan's environment), for deliveries and the mapping preview.
 */

interface DeliveryCaseRow {
  id: string;
  title: string;
  severity: string;
  priority: string | null;
  recommended_action: string | null;
  reasoning: string | null;
  status: string;
  scanner: string;
  rule_id: string | null;
  cve_ids: string[];
  cvss_score: string | null;
  epss: number | null;
  kev: boolean;
  kev_due_date: string | null;
  asset: string | null;
  host: string | null;
  component: string | null;
  environment: string | null;
  first_seen: Date;
  last_seen: Date;
  due_at: Date | null;
  assignee: string | null;
  tags: string[];
}

/** The case as a delivery renders it, with its KEV membership, highest EPSS and environment. */
export async function loadDeliveryCase(
  db: Queryable,
  caseId: string,
  baseUrl: string,
): Promise<DeliveryCase | null> {
  const { rows } = await db.query<DeliveryCaseRow>(
    sql`SELECT c.id, c.title, c.severity, c.priority, c.recommended_action, c.reasoning, c.status, c.scanner,
               c.rule_id, c.cve_ids, c.cvss_score, c.asset, c.host, c.component, c.first_seen, c.last_seen,
               ${dueAtSql('c')} AS due_at,
               c.rule_id, c.cve_ids, c.cvss_score, c.asset, c.host, c.component, c.first_seen, c.last_seen,
               c.assignee, c.tags,
               EXISTS (SELECT 1 FROM kev_entries k WHERE k.cve_id = ANY(c.cve_ids)) AS kev,
               (SELECT to_char(min(k.due_date), 'YYYY-MM-DD') FROM kev_entries k WHERE k.cve_id = ANY(c.cve_ids))
                 AS kev_due_date,
               (SELECT max(e.epss) FROM epss_scores e WHERE e.cve_id = ANY(c.cve_ids)) AS epss,
               (SELECT s.asset_environment FROM scans s WHERE s.id = c.last_scan_id) AS environment
        FROM cases c WHERE c.id = ${caseId}`,
  );
  const r = rows[0];
  if (!r) return null;
  const base = baseUrl.replace(/\/+$/, '');
  return {
    id: r.id,
    title: r.title,
    severity: r.severity,
    priority: r.priority,
    recommendedAction: r.recommended_action,
    reasoning: r.reasoning,
    status: r.status,
    scanner: r.scanner,
    ruleId: r.rule_id,
    cveIds: r.cve_ids,
    cvssScore: r.cvss_score === null ? null : Number(r.cvss_score),
    epss: r.epss,
    kev: r.kev,
    asset: r.asset,
    host: r.host,
    component: r.component,
    environment: r.environment,
    firstSeen: r.first_seen,
    lastSeen: r.last_seen,
    url: `${base}/api/v1/cases/${r.id}`,
    consoleUrl: `${base}/cases/${r.id}`,
    kevDueDate: r.kev_due_date,
    dueAt: r.due_at,
    assignee: r.assignee,
    tags: r.tags,
  };
}
