import { isUuid } from '../../lib/ids.js';

/**
 * The filters of DECISIONS §10 (severity, status, priority, action, triaged, stale, CVE, asset,
 * scanner, scan, KEV, EPSS at least) as SQL over a table alias, with parameters appended to `params`. Shared by the
 * findings and cases lists and the exports. A finding has no status or triage of its own: its
 * status and triage are its case's (same workspace and fingerprint).
 */
export interface ListFilters {
  severity?: string[];
  status?: string[];
  /** The current triage's priority (untriaged cases never match). */
  priority?: string[];
  /** The current triage's recommended action. */
  action?: string[];
  triaged?: boolean;
  stale?: boolean;
  cve?: string;
  asset?: string;
  scan?: string;
  kev?: boolean;
  /** The scanner that reported it (`scanner` of a case or finding), exactly. */
  scanner?: string;
  /** The highest EPSS of its CVEs is at least this (no CVE with an EPSS score: no match). */
  epssMin?: number;
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
  // Conditions on the case: on the row itself for cases, through one EXISTS for findings.
  const c = table === 'cases' ? alias : 'fc';
  const onCase: string[] = [];
  if (f.status?.length) onCase.push(`${c}.status = ANY(${p(f.status)}::text[])`);
  if (f.priority?.length) onCase.push(`${c}.priority = ANY(${p(f.priority)}::text[])`);
  if (f.action?.length) onCase.push(`${c}.recommended_action = ANY(${p(f.action)}::text[])`);
  if (f.triaged !== undefined) onCase.push(`${c}.triaged_at IS ${f.triaged ? 'NOT ' : ''}NULL`);
  if (f.stale !== undefined) onCase.push(`${f.stale ? '' : 'NOT '}${c}.triage_stale`);
  if (onCase.length && table === 'cases') where.push(...onCase);
  if (onCase.length && table === 'findings') {
    where.push(
      `EXISTS (SELECT 1 FROM cases fc WHERE fc.workspace_id = ${alias}.workspace_id AND fc.fingerprint = ${alias}.fingerprint
                 AND ${onCase.join(' AND ')})`,
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
  if (f.scanner !== undefined) where.push(`${alias}.scanner = ${p(f.scanner)}`);
  if (f.epssMin !== undefined) {
    where.push(
      `(SELECT max(e.epss) FROM epss_scores e WHERE e.cve_id = ANY(${alias}.cve_ids)) >= ${p(f.epssMin)}::float8`,
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

/** Joined to `findings f`: only findings of completed scans are visible (see `domain/scans/ingest-store.ts`). */
export const VISIBLE_FINDINGS = `JOIN scans s ON s.id = f.scan_id AND s.status = 'completed'`;
