import { isUuid } from '../../lib/ids.js';

/**
 * The filters of DECISIONS §10 (severity, status, CVE, asset, scan, KEV) as SQL over a table
 * alias, with parameters appended to `params`. Shared by the findings and cases lists.
 * A finding has no status of its own: its status is its case's (same workspace and fingerprint).
 */
export interface ListFilters {
  severity?: string[];
  status?: string[];
  cve?: string;
  asset?: string;
  scan?: string;
  kev?: boolean;
}

/** WHERE clauses of `f` over the `findings` or `cases` row aliased `alias`. */
export function filterSql(
  alias: string,
  f: ListFilters,
  params: unknown[],
  table: 'findings' | 'cases',
): string[] {
  const where: string[] = [];
  const p = (v: unknown): string => {
    params.push(v);
    return `$${params.length}`;
  };
  if (f.severity?.length) where.push(`${alias}.severity = ANY(${p(f.severity)}::text[])`);
  if (f.status?.length) {
    where.push(
      table === 'cases'
        ? `${alias}.status = ANY(${p(f.status)}::text[])`
        : `EXISTS (SELECT 1 FROM cases fc WHERE fc.workspace_id = ${alias}.workspace_id AND fc.fingerprint = ${alias}.fingerprint
                   AND fc.status = ANY(${p(f.status)}::text[]))`,
    );
  }
  if (f.cve) where.push(`${alias}.cve_ids @> ARRAY[${p(f.cve.toUpperCase())}::text]`);
  if (f.asset) {
    const a = p(f.asset);
    where.push(
      `(${alias}.asset = ${a} OR ${alias}.host = ${a} OR ${alias}.ip = ${a} OR ${alias}.fqdn = ${a} OR ${alias}.component = ${a})`,
    );
  }
  if (f.scan !== undefined) {
    // A malformed scan id matches nothing rather than erroring: it is a filter, not a lookup.
    const id = isUuid(f.scan) ? f.scan : '00000000-0000-0000-0000-000000000000';
    where.push(
      table === 'findings'
        ? `${alias}.scan_id = ${p(id)}::uuid`
        : `EXISTS (SELECT 1 FROM findings sf JOIN scans ss ON ss.id = sf.scan_id AND ss.status = 'completed'
                   WHERE sf.workspace_id = ${alias}.workspace_id AND sf.fingerprint = ${alias}.fingerprint AND sf.scan_id = ${p(id)}::uuid)`,
    );
  }
  if (f.kev !== undefined) {
    where.push(
      `${f.kev ? '' : 'NOT '}EXISTS (SELECT 1 FROM kev_entries k WHERE k.cve_id = ANY(${alias}.cve_ids))`,
    );
  }
  return where;
}

export const kevColumn = (alias: string): string =>
  `EXISTS (SELECT 1 FROM kev_entries k WHERE k.cve_id = ANY(${alias}.cve_ids)) AS kev`;

export const splitList = (s: string | undefined): string[] | undefined =>
  s ? s.split(',').filter(Boolean) : undefined;

/** Joined to `findings f`: only findings of completed scans are visible (see findings-store). */
export const VISIBLE_FINDINGS = `JOIN scans s ON s.id = f.scan_id AND s.status = 'completed'`;
