import { sql, type SqlFragment } from '../../db/sql.js';
import { filterWhere, type ListFilters } from '../cases/list-filters.js';
import type { WorkflowRule } from './types.js';

/**
 * A workflow's rule as WHERE conditions over `cases c`, reusing the case list's filters
 * (docs/workflows.md#rules: one filter language), so a rule selects exactly what
 * `GET /api/v1/cases` with the same filters lists. Evaluated set-based, in the statement that
 * inserts the deliveries, never by loading cases. To be joined with AND; none: every case.
 *
 * `environment` is not (yet) a list filter; its condition lives here until the shared filters
 * take it (then this passes it through).
 */
export function ruleWhere(rule: WorkflowRule): SqlFragment[] {
  const filters: ListFilters = {
    severity: rule.severity,
    status: rule.status,
    priority: rule.priority,
    action: rule.action,
    triaged: rule.triaged,
    stale: rule.stale,
    cve: rule.cve,
    asset: rule.asset,
    scan: rule.scan,
    kev: rule.kev,
    assignee: rule.assignee,
    unassigned: rule.unassigned,
    tag: rule.tag,
    // An empty scanner leaves nothing out, like an empty `cve` or `asset`.
    scanner: rule.scanner || undefined,
  };
  const where = filterWhere('c', filters, 'cases');
  if (rule.environment?.length)
    where.push(
      sql`EXISTS (SELECT 1 FROM scans es WHERE es.id = c.last_scan_id AND es.asset_environment = ANY(${rule.environment}::text[]))`,
    );
  return where;
}
