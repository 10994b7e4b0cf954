import { sql, type SqlFragment } from '../../db/sql.js';
import type { ScopeHost } from '../../parsers/index.js';

/**
 * A case's scope (docs/ingestion.md#rescans): the scanner that found it and where — its host
 * (ip, then FQDN, then host name, as in its fingerprint), or for a finding without a host the
 * scan's hostless scope (`asset:<name>` from the upload's `asset=`, or `subject:<name>` from the
 * file). Stored on the case as the JSON text `["<scanner, lower-cased>", "<where>"]` (m024), so
 * a scan names the cases of its scope by equality over `cases_ws_scope_open_idx`.
 */

/**
 * Where a row of `ip`, `fqdn`, `host` columns is, or `hostless` when it names no host. The
 * columns are unqualified: the caller's FROM has exactly one relation with them.
 */
function whereSql(hostless: string | null): SqlFragment {
  return sql`CASE WHEN nullif(trim(ip), '') IS NOT NULL THEN 'ip:' || lower(trim(ip))
       WHEN nullif(trim(fqdn), '') IS NOT NULL THEN 'host:' || lower(trim(fqdn))
       WHEN nullif(trim(host), '') IS NOT NULL THEN 'host:' || lower(trim(host))
       ELSE ${hostless}::text END`;
}

/** The scope of a `findings` row (columns unqualified), NULL when it has none. */
export function findingScopeSql(hostless: string | null): SqlFragment {
  return sql`CASE WHEN (${whereSql(hostless)}) IS NULL THEN NULL
       ELSE json_build_array(lower(trim(scanner)), ${whereSql(hostless)})::text END`;
}

/** What a completed scan covered, as its completion names it. */
export interface ScanScopeKeys {
  /** Scanner names (any case). */
  scanners: string[];
  hosts: ScopeHost[];
  /** `asset:<name>` or `subject:<name>`, or null. */
  hostless: string | null;
}

/** The distinct scope keys a scan covered: every scanner × every host and its hostless scope. */
export function scanScopeKeysSql(s: ScanScopeKeys): SqlFragment {
  const ips = s.hosts.map((h) => h.ip);
  const fqdns = s.hosts.map((h) => h.fqdn);
  const hosts = s.hosts.map((h) => h.host);
  return sql`SELECT DISTINCT json_build_array(lower(trim(sc)), w)::text AS key
     FROM unnest(${s.scanners}::text[]) AS sc,
          (SELECT ${whereSql(null)} AS w FROM unnest(${ips}::text[], ${fqdns}::text[], ${hosts}::text[]) AS h(ip, fqdn, host)
           UNION SELECT ${s.hostless}::text) AS wh
     WHERE w IS NOT NULL AND nullif(trim(sc), '') IS NOT NULL`;
}
