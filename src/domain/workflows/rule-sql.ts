import { filterSql, type ListFilters } from '../cases/list-filters.js';
import type { WorkflowRule } from './types.js';

/**
 * A workflow's rule as WHERE clauses over `cases c`, reusing the case list's filter SQL
 * (docs/workflows.md#rules: one filter language), so a rule selects exactly what
 * `GET /api/v1/cases` with the same filters lists. Evaluated set-based, in the statement that
 * inserts the deliveries, never by loading cases.
 *
 * `environment` and `scanner` are not (yet) list filters of `filterSql`; their clauses live
 * here until the shared filters take them (then this passes them through).
 */
export function ruleWhere(rule: WorkflowRule, params: unknown[], alias = 'c'): string[] {
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
  };
  const where = filterSql(alias, filters, params, 'cases');
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (rule.scanner) where.push(`${alias}.scanner = ${p(rule.scanner)}`);
  if (rule.environment?.length)
    where.push(
      `EXISTS (SELECT 1 FROM scans es WHERE es.id = ${alias}.last_scan_id AND es.asset_environment = ANY(${p(rule.environment)}::text[]))`,
    );
  return where;
}
