import { pipeline } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { markStaleForCves } from '../scans/case-triage-store.js';
import { EpssCsvToCopy } from './epss-csv.js';
import { malformed } from './import-error.js';
import { lockFeed, recordImport, runImport, type ImportResultBase } from './import-run.js';
import { openSource, type EnrichmentSource, type OpenedSource, type OpenSourceOptions } from './source.js';

export interface EpssImportResult extends ImportResultBase {
  source: 'epss';
  /** From the file's `#model_version:...,score_date:...` line; null when it has none. */
  scoreDate: string | null;
  modelVersion: string | null;
}

/**
 * Loads a FIRST EPSS daily file (CSV, gzip or not) and replaces `epss_scores` with it in one
 * transaction (DECISIONS §6). The file streams through a validating line parser into
 * `COPY ... FROM STDIN` on a temporary table, then one `INSERT ... SELECT` swaps the
 * contents; nothing holds the whole file in memory. `DELETE` rather than `TRUNCATE`, so
 * lookups keep reading yesterday's scores, without waiting on a lock, until the commit.
 */
export async function importEpss(
  pool: Pool,
  source: EnrichmentSource,
  options: OpenSourceOptions = {},
): Promise<EpssImportResult> {
  return runImport('epss', source, async (origin) => {
    const started = performance.now();
    const opened = await openSource(source, options);
    const csv = new EpssCsvToCopy();
    const rows = await withTransaction(pool, async (client) => {
      await lockFeed(client, 'epss');
      const inserted = await replaceScores(client, opened, csv);
      // Every score may have moved: check every triaged case against its snapshot (DECISIONS §10).
      await markStaleForCves(client, null);
      await recordImport(client, 'epss', origin, inserted);
      return inserted;
    }).finally(() => opened.body.destroy()); // closes the file or download if we failed before its end
    return {
      source: 'epss',
      origin,
      rows,
      scoreDate: csv.meta.scoreDate,
      modelVersion: csv.meta.modelVersion,
      durationMs: Math.round(performance.now() - started),
    };
  });
}

async function replaceScores(client: PoolClient, opened: OpenedSource, csv: EpssCsvToCopy): Promise<number> {
  // No primary key on the staging table: COPY stays an append, and the INSERT below finds duplicates.
  await client.query(
    `CREATE TEMP TABLE epss_staging (cve_id text NOT NULL, epss double precision NOT NULL,
       percentile double precision NOT NULL) ON COMMIT DROP`,
  );
  const copy = client.query(copyFrom('COPY epss_staging (cve_id, epss, percentile) FROM STDIN'));
  await pipeline(opened.body, opened.decode, csv, copy);
  await client.query('DELETE FROM epss_scores');
  try {
    const res = await client.query(
      `INSERT INTO epss_scores (cve_id, epss, percentile, score_date)
       SELECT cve_id, epss, percentile, $1::date FROM epss_staging`,
      [csv.meta.scoreDate],
    );
    return res.rowCount ?? 0;
  } catch (err) {
    const e = err as { code?: string; detail?: string };
    if (e.code !== '23505') throw err;
    const cve = /\(cve_id\)=\(([^)]*)\)/.exec(e.detail ?? '')?.[1] ?? 'unknown';
    throw malformed(`a CVE is listed twice (${cve})`);
  }
}
