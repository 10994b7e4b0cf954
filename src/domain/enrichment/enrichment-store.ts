import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Db, Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import type { EnrichmentSourceKind } from './import-error.js';
import type { KevEntry } from './kev-entry.js';
import type { CisaSsvc, CveEnrichment } from './types.js';

/**
 * The enrichment area's store (docs/triage.md#enrichment): the one module naming `kev_entries`,
 * `epss_scores`, `cvss_scores`, `cisa_ssvc` and `enrichment_imports`. Functions of `(db, …)`, camelCase out.
 * The importers call the writes inside their own `withTransaction`, under {@link lockFeed}, so
 * an import is all or nothing and readers see the old data until its commit.
 */

const LOCK_NAMESPACE = 727_002;
const LOCK_IDS: Record<EnrichmentSourceKind, number> = { kev: 1, epss: 2, nvd: 3, vulnrichment: 4 };

/**
 * Serialises imports of one feed across processes (the daily job, an admin running the CLI):
 * two overlapping full replaces would each delete only the rows they can see and then collide
 * on the other's inserts. Held until the transaction ends.
 */
export async function lockFeed(db: Db, kind: EnrichmentSourceKind): Promise<void> {
  await db.query(sql`SELECT pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${LOCK_IDS[kind]})`);
}

/** Logs a finished import in `enrichment_imports`; call it inside the import's transaction. */
export async function recordImport(
  db: Db,
  kind: EnrichmentSourceKind,
  origin: string,
  rows: number,
): Promise<void> {
  await db.query(
    sql`INSERT INTO enrichment_imports (source, origin, rows) VALUES (${kind}, ${origin}, ${rows})`,
  );
}

/** Splits `items` into arrays of at most `size`, for multi-row statements with bounded parameters. */
function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

const KEV_INSERT_BATCH = 1_000;

/**
 * Replaces the whole KEV catalog with `entries` (call it in the import's transaction). Returns
 * the CVEs that joined or left the catalog, from the rows the `DELETE` returns: no extra read.
 */
export async function replaceKevEntries(
  db: Db,
  entries: readonly KevEntry[],
  catalogVersion: string,
): Promise<{ changedCves: string[] }> {
  const before = await db.query<{ cve_id: string }>(sql`DELETE FROM kev_entries RETURNING cve_id`);
  for (const batch of chunks(entries, KEV_INSERT_BATCH)) {
    await db.query(sql`
      INSERT INTO kev_entries
        (cve_id, vendor_project, product, vulnerability_name, date_added, due_date, known_ransomware, catalog_version)
      SELECT *, ${catalogVersion}::text
        FROM unnest(${batch.map((e) => e.cveId)}::text[], ${batch.map((e) => e.vendorProject)}::text[],
                    ${batch.map((e) => e.product)}::text[], ${batch.map((e) => e.vulnerabilityName)}::text[],
                    ${batch.map((e) => e.dateAdded)}::date[], ${batch.map((e) => e.dueDate)}::date[],
                    ${batch.map((e) => e.knownRansomware)}::boolean[])`);
  }
  const old = new Set(before.rows.map((r) => r.cve_id));
  const joined = entries.map((e) => e.cveId).filter((cve) => !old.delete(cve));
  return { changedCves: [...joined, ...old] };
}

/** Whether the KEV catalog is empty (never loaded). */
export async function kevIsEmpty(db: Db): Promise<boolean> {
  const { rows } = await db.query<{ empty: boolean }>(
    sql`SELECT NOT EXISTS (SELECT 1 FROM kev_entries) AS empty`,
  );
  return rows[0]?.empty ?? true;
}

/**
 * Replaces `epss_scores` with the rows `source` streams as COPY text (`cve_id\tepss\tpercentile`
 * lines), all dated `scoreDate()` (known once the stream has ended); a client, as COPY needs one. The rows go through a
 * temporary table, then one `INSERT … SELECT`; `DELETE` rather than `TRUNCATE`, so lookups keep
 * reading yesterday's scores without waiting on a lock until the commit. Call it in the
 * import's transaction. `duplicate` names a CVE the file lists twice (nothing is written then).
 */
export async function replaceEpssScores(
  db: PoolClient,
  source: readonly [Readable, ...Transform[]],
  scoreDate: () => string | null,
): Promise<{ inserted: number } | { duplicate: string }> {
  // No primary key on the staging table: COPY stays an append, and the INSERT below finds duplicates.
  await db.query(
    `CREATE TEMP TABLE epss_staging (cve_id text NOT NULL, epss double precision NOT NULL,
       percentile double precision NOT NULL) ON COMMIT DROP`,
  );
  const copy = db.query(copyFrom('COPY epss_staging (cve_id, epss, percentile) FROM STDIN'));
  await pipeline([...source, copy]);
  await db.query('DELETE FROM epss_scores');
  try {
    const res = await db.query(sql`
      INSERT INTO epss_scores (cve_id, epss, percentile, score_date)
      SELECT cve_id, epss, percentile, ${scoreDate()}::date FROM epss_staging`);
    return { inserted: res.rowCount ?? 0 };
  } catch (err) {
    const e = err as { code?: string; detail?: string };
    if (e.code !== '23505') throw err;
    return { duplicate: /\(cve_id\)=\(([^)]*)\)/.exec(e.detail ?? '')?.[1] ?? 'unknown' };
  }
}

/** A CVSS base score as NVD gives it (`nvd-cvss.ts`). */
export interface CvssScoreRow {
  cveId: string;
  score: number;
  version: string;
  vector: string | null;
  source: string | null;
}

/**
 * Upserts CVSS base scores and deletes those of `rejectedCves`. Unchanged rows are not
 * rewritten, so `updated_at` says when NVD last changed the score.
 */
export async function writeCvssScores(
  db: Db,
  scores: readonly CvssScoreRow[],
  rejectedCves: readonly string[],
): Promise<void> {
  if (scores.length > 0) {
    await db.query(sql`
      INSERT INTO cvss_scores AS c (cve_id, base_score, version, vector, source)
      SELECT * FROM unnest(${scores.map((s) => s.cveId)}::text[], ${scores.map((s) => s.score)}::numeric[],
                           ${scores.map((s) => s.version)}::text[], ${scores.map((s) => s.vector)}::text[],
                           ${scores.map((s) => s.source)}::text[])
      ON CONFLICT (cve_id) DO UPDATE
        SET base_score = excluded.base_score, version = excluded.version, vector = excluded.vector,
            source = excluded.source, updated_at = now()
        WHERE (c.base_score, c.version, c.vector, c.source)
              IS DISTINCT FROM (excluded.base_score, excluded.version, excluded.vector, excluded.source)`);
  }
  if (rejectedCves.length > 0)
    await db.query(sql`DELETE FROM cvss_scores WHERE cve_id = ANY(${rejectedCves}::text[])`);
}

/**
 * Upserts CISA's SSVC decisions. A CVE's stored decision is replaced only by one CISA scored at
 * the same time or later, so loading an older checkout after a newer one changes nothing.
 * Returns the CVEs whose decision is new or changed.
 */
export async function writeCisaSsvc(
  db: Db,
  rows: ReadonlyArray<{ cveId: string } & CisaSsvc>,
): Promise<string[]> {
  if (rows.length === 0) return [];
  const res = await db.query<{ cve_id: string }>(sql`
    INSERT INTO cisa_ssvc AS c (cve_id, exploitation, automatable, technical_impact, ssvc_version, scored_at)
    SELECT * FROM unnest(${rows.map((r) => r.cveId)}::text[], ${rows.map((r) => r.exploitation)}::text[],
                         ${rows.map((r) => r.automatable)}::text[], ${rows.map((r) => r.technicalImpact)}::text[],
                         ${rows.map((r) => r.version)}::text[], ${rows.map((r) => r.scoredAt)}::timestamptz[])
    ON CONFLICT (cve_id) DO UPDATE
      SET exploitation = excluded.exploitation, automatable = excluded.automatable,
          technical_impact = excluded.technical_impact, ssvc_version = excluded.ssvc_version,
          scored_at = excluded.scored_at, updated_at = now()
      WHERE excluded.scored_at >= c.scored_at
        AND (c.exploitation, c.automatable, c.technical_impact, c.ssvc_version, c.scored_at)
            IS DISTINCT FROM (excluded.exploitation, excluded.automatable, excluded.technical_impact,
                              excluded.ssvc_version, excluded.scored_at)
    RETURNING cve_id`);
  return res.rows.map((r) => r.cve_id);
}

interface EnrichmentRow {
  cve_id: string;
  kev: boolean;
  kev_ransomware: boolean;
  kev_date_added: string | null;
  kev_due_date: string | null;
  epss: number | null;
  epss_percentile: number | null;
  epss_date: string | null;
  cvss_score: number | null;
  cvss_version: string | null;
  cvss_vector: string | null;
  ssvc_exploitation: CisaSsvc['exploitation'] | null;
  ssvc_automatable: CisaSsvc['automatable'] | null;
  ssvc_technical_impact: CisaSsvc['technicalImpact'] | null;
  ssvc_version: string | null;
  ssvc_scored_at: Date | null;
}

// Dates as text and the numeric score as float8, so node-postgres returns strings and numbers
// rather than local-time Date objects and numeric strings.
const lookupSql = (cveIds: readonly string[]) => sql`
  SELECT ids.cve_id,
         k.cve_id IS NOT NULL AS kev,
         coalesce(k.known_ransomware, false) AS kev_ransomware,
         to_char(k.date_added, 'YYYY-MM-DD') AS kev_date_added,
         to_char(k.due_date, 'YYYY-MM-DD') AS kev_due_date,
         e.epss, e.percentile AS epss_percentile, to_char(e.score_date, 'YYYY-MM-DD') AS epss_date,
         c.base_score::float8 AS cvss_score, c.version AS cvss_version, c.vector AS cvss_vector,
         s.exploitation AS ssvc_exploitation, s.automatable AS ssvc_automatable,
         s.technical_impact AS ssvc_technical_impact, s.ssvc_version, s.scored_at AS ssvc_scored_at
    FROM unnest(${cveIds}::text[]) AS ids(cve_id)
    LEFT JOIN kev_entries k ON k.cve_id = ids.cve_id
    LEFT JOIN epss_scores e ON e.cve_id = ids.cve_id
    LEFT JOIN cvss_scores c ON c.cve_id = ids.cve_id
    LEFT JOIN cisa_ssvc s ON s.cve_id = ids.cve_id
   WHERE k.cve_id IS NOT NULL OR e.cve_id IS NOT NULL OR c.cve_id IS NOT NULL OR s.cve_id IS NOT NULL`;

/**
 * The enrichment of each of `cveIds` (already normalised) that any feed knows, in one query over
 * the three tables. Takes any `Queryable`, so a test can answer it without a database.
 */
export async function findEnrichment(db: Queryable, cveIds: readonly string[]): Promise<CveEnrichment[]> {
  const { rows } = await db.query<EnrichmentRow>(lookupSql(cveIds));
  return rows.map((r) => ({
    cveId: r.cve_id,
    kev: r.kev,
    kevRansomware: r.kev_ransomware,
    kevDateAdded: r.kev_date_added,
    kevDueDate: r.kev_due_date,
    epss: r.epss,
    epssPercentile: r.epss_percentile,
    epssDate: r.epss_date,
    cvssScore: r.cvss_score,
    cvssVersion: r.cvss_version,
    cvssVector: r.cvss_vector,
    cisaSsvc:
      r.ssvc_exploitation === null
        ? null
        : {
            exploitation: r.ssvc_exploitation,
            automatable: r.ssvc_automatable!,
            technicalImpact: r.ssvc_technical_impact!,
            version: r.ssvc_version!,
            scoredAt: r.ssvc_scored_at!,
          },
  }));
}

/** What the enrichment tables hold now: counts, the KEV catalog version and last load, the EPSS date. */
export interface EnrichmentCounts {
  kevEntries: number;
  kevVersion: string | null;
  kevImportedAt: Date | null;
  epssScores: number;
  epssDate: string | null;
  cvssScores: number;
  cisaSsvc: number;
}

export async function enrichmentCounts(db: Db): Promise<EnrichmentCounts> {
  const { rows } = await db.query<EnrichmentCounts>(sql`SELECT
      (SELECT count(*)::int FROM kev_entries) AS "kevEntries",
      (SELECT max(catalog_version) FROM kev_entries) AS "kevVersion",
      (SELECT max(finished_at) FROM enrichment_imports WHERE source = 'kev') AS "kevImportedAt",
      (SELECT count(*)::int FROM epss_scores) AS "epssScores",
      (SELECT to_char(max(score_date), 'YYYY-MM-DD') FROM epss_scores) AS "epssDate",
      (SELECT count(*)::int FROM cvss_scores) AS "cvssScores",
      (SELECT count(*)::int FROM cisa_ssvc) AS "cisaSsvc"`);
  return rows[0]!;
}
