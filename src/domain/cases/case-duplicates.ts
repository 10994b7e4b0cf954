import type { Db, Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { sql, type SqlFragment } from '../../db/sql.js';
import { isUuid } from '../../lib/ids.js';

/**
 * One vulnerability, one case (docs/cases.md#one-vulnerability-one-case): two cases on one asset
 * that share a CVE or an alias are one vulnerability, and the later one is marked a duplicate of
 * the earliest open one.
 *
 * Glossary:
 * - **vulnerability key**: `h|<host>|<id>` for a finding with a host (its IP, FQDN and host name,
 *   lower-cased, without a trailing dot: one key each), `p|<upload asset>|<package>|<id>` for a
 *   dependency finding (its package URL without qualifiers, and its name@version), where `<id>`
 *   is each of its CVEs and aliases, upper-cased. Two cases that share a key are one vulnerability
 *   on one asset. Findings with neither a host nor a package (code findings) have none.
 * - **original**: a case that is not a duplicate; a duplicate's `duplicate_of` is always one.
 *
 * One scanner's one rule on two ports or locations of a host is two cases by design (the
 * fingerprint keeps the location), so such a pair is never marked: only two rules, or two
 * scanners, reporting one vulnerability are.
 */

/** A `cases` insert's `vuln_keys` from the finding row aliased `d` (see the glossary). */
export function vulnKeysSql(uploadAsset: SqlFragment): SqlFragment {
  const host = (col: SqlFragment) => sql`'h|' || nullif(rtrim(lower(btrim(${col})), '.'), '')`;
  const pkg = sql`'p|' || coalesce(${uploadAsset}, '') || '|'`;
  return sql`ARRAY(SELECT DISTINCT k.a || '|' || upper(btrim(v.id))
      FROM unnest(CASE WHEN coalesce(d.ip, d.fqdn, d.host) IS NOT NULL
             THEN ARRAY[${host(sql`d.ip`)}, ${host(sql`d.fqdn`)}, ${host(sql`d.host`)}]
             ELSE ARRAY[${pkg} || nullif(lower(split_part(split_part(btrim(d.purl), '?', 1), '#', 1)), ''),
                        ${pkg} || nullif(lower(btrim(d.component)), '') || '@' || nullif(lower(btrim(d.component_version)), '')]
           END) AS k(a),
           unnest(d.cve_ids || d.aliases) AS v(id)
      WHERE k.a IS NOT NULL AND btrim(v.id) <> '' ORDER BY 1)`;
}

/** The advisory-lock class of the marking: one lock per workspace within it. */
const MARKING_LOCK = 27_001;

/**
 * Marks the cases `scanId` sighted that share a vulnerability key with an open original: each
 * becomes a duplicate of the earliest such case (first seen, then created). Runs in the scan's
 * completion transaction after its cases were upserted. A case the scan created may follow any
 * earlier open original; a case it saw again (its keys may have grown: a scanner that now names
 * the CVE or an alias) follows only an original seen before it, and is left as it is when it is
 * itself the original of duplicates (one level deep, and their rows are not this scan's to lock).
 *
 * Concurrency: completions of one workspace take this step one at a time (a transaction-scoped
 * advisory lock), and each statement after the lock sees what the one before committed. A case
 * another completion committed counts as earlier than this scan's new cases, whatever its
 * timestamps, so two scans of one vulnerability completing together make one original and one
 * duplicate, never two originals. Only cases this scan sighted are written, rows its upsert
 * already holds, so the step waits on no other row lock while holding the advisory lock.
 *
 * Returns how many cases it marked.
 */
export async function markScanDuplicates(tx: Db, scanId: string, workspaceId: string): Promise<number> {
  await tx.query(sql`SELECT pg_advisory_xact_lock(${MARKING_LOCK}::int, hashtext(${workspaceId}::text))`);
  // Set-based, hash joins only: the rows this scan just wrote have no statistics yet, so the
  // planner takes them for one row and picks nested loops that rescan one side per row (52,251
  // new CLI cases: 55 s and more). Measured in bench/ingest/README.md.
  await tx.query(sql`SET LOCAL enable_nestloop = off`);
  const picked = await tx.query<{ id: string; original: string }>(
    sql`WITH fresh AS MATERIALIZED (
       -- The cases the scan sighted with a key (a key needs a CVE or an alias): new ones, and
       -- ones it saw again that no duplicate follows.
       SELECT c.id, c.seq, c.first_seen, c.first_scan_id = ${scanId} AS new, c.vuln_keys, c.scanner, c.rule_id
       FROM cases c
       WHERE c.workspace_id = ${workspaceId} AND c.last_scan_id = ${scanId} AND c.vuln_keys <> '{}'
         AND c.duplicate_of IS NULL AND NOT c.duplicate_kept
         AND (c.first_scan_id = ${scanId}
              OR NOT EXISTS (SELECT 1 FROM cases d WHERE d.duplicate_of = c.id))
     ), fk AS MATERIALIZED (
       SELECT f.id, f.seq, f.first_seen, f.new, f.scanner, f.rule_id, k.key
       FROM fresh f, unnest(f.vuln_keys) AS k(key)
     ), cand AS MATERIALIZED (
       -- A hash semi-join of the workspace's open originals' keys with the new ones. Not
       -- "vuln_keys && (every key)" through the GIN index: PostgreSQL rechecks array overlap
       -- element by element against the whole array, quadratic for a large scan.
       SELECT y.id, y.seq, y.first_seen, y.first_scan_id, y.scanner, y.rule_id, k.key
       FROM cases y, unnest(y.vuln_keys) AS k(key)
       WHERE y.workspace_id = ${workspaceId} AND y.vuln_keys <> '{}'
         AND y.duplicate_of IS NULL AND y.status IN ('open', 'in_progress')
         AND k.key IN (SELECT key FROM fk)
     ), firsts AS MATERIALIZED (
       -- Per key and (scanner, rule), the earliest candidate and the earliest of another scan:
       -- the only ones a pick can be (a later one of this scan is never before the first one,
       -- nor eligible when it is not). Joining all of them paired the cases one rule reports
       -- on many ports of one host with each other: 4.6 M pairs for an 11,041-finding scan.
       (SELECT DISTINCT ON (key, scanner, rule_id) * FROM cand ORDER BY key, scanner, rule_id, first_seen, seq)
       UNION ALL
       (SELECT DISTINCT ON (key, scanner, rule_id) * FROM cand WHERE first_scan_id <> ${scanId}
        ORDER BY key, scanner, rule_id, first_seen, seq)
     ), pick AS (
       SELECT DISTINCT ON (fk.id) fk.id, y.id AS original
       FROM fk JOIN firsts y ON y.key = fk.key AND y.id <> fk.id
       WHERE (CASE WHEN fk.new THEN y.first_scan_id <> ${scanId} OR y.seq < fk.seq
                   ELSE (y.first_seen, y.seq) < (fk.first_seen, fk.seq) END)
         AND NOT (y.scanner = fk.scanner AND y.rule_id IS NOT DISTINCT FROM fk.rule_id)
       ORDER BY fk.id, y.first_seen, y.seq
     )
     SELECT id, original FROM pick`,
  );
  await tx.query(sql`SET LOCAL enable_nestloop = on`);
  if (picked.rows.length === 0) return 0;
  const { rows } = await tx.query<{ id: string }>(
    sql`UPDATE cases c SET duplicate_of = v.original, updated_at = now()
        FROM unnest(${picked.rows.map((r) => r.id)}::uuid[], ${picked.rows.map((r) => r.original)}::uuid[]) AS v(id, original)
        WHERE c.id = v.id RETURNING c.id`,
  );
  // Within one scan an original may itself have been marked in the same statement (A ~ B ~ C
  // but not A ~ C): point its duplicates at its own original, so duplicates stay one level deep.
  await tx.query(
    sql`UPDATE cases d SET duplicate_of = o.duplicate_of FROM cases o
        WHERE d.id = ANY(${rows.map((r) => r.id)}::uuid[]) AND o.id = d.duplicate_of AND o.duplicate_of IS NOT NULL`,
  );
  return rows.length;
}

/**
 * Un-marks a duplicate (`PATCH … {"duplicateOf": null}`): it shows in lists again, keeps its own
 * status from now on, and ingestion never marks it again. A history entry records it. Null when
 * the case is not in the workspace; unchanged when it was no duplicate.
 */
export async function unmarkDuplicate(
  pool: Pool,
  input: { workspaceId: string; caseId: string; actor: string; note: string | null },
): Promise<boolean> {
  if (!isUuid(input.caseId)) return false;
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ status: string; duplicate_of: string | null }>(
      sql`SELECT status, duplicate_of FROM cases WHERE id = ${input.caseId} AND workspace_id = ${input.workspaceId}
          FOR UPDATE`,
    );
    const row = rows[0];
    if (!row) return false;
    if (row.duplicate_of === null) return true;
    await tx.query(
      sql`UPDATE cases SET duplicate_of = NULL, duplicate_kept = true, updated_at = now() WHERE id = ${input.caseId}`,
    );
    const note = input.note ?? `No longer a duplicate of case ${row.duplicate_of}.`;
    await tx.query(
      sql`INSERT INTO case_status_history (case_id, from_status, to_status, actor, note)
          VALUES (${input.caseId}, ${row.status}, ${row.status}, ${input.actor}, ${note})`,
    );
    return true;
  });
}
