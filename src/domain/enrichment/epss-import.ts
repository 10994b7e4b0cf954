import type { Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { markStaleForCves } from '../cases/case-triage-store.js';
import { EpssCsvToCopy } from './epss-csv.js';
import { malformed } from './import-error.js';
import { lockFeed, recordImport, replaceEpssScores } from './enrichment-store.js';
import { runImport, type ImportResultBase } from './import-run.js';
import { openSource, type EnrichmentSource, type OpenSourceOptions } from './source.js';

export interface EpssImportResult extends ImportResultBase {
  source: 'epss';
  /** From the file's `#model_version:...,score_date:...` line; null when it has none. */
  scoreDate: string | null;
  modelVersion: string | null;
}

/**
 * Loads a FIRST EPSS daily file (CSV, gzip or not) and replaces `epss_scores` with it in one
 * transaction (docs/triage.md#request-and-answer). The file streams through a validating line parser into
 * `COPY ... FROM STDIN` (`replaceEpssScores`); nothing holds the whole file in memory.
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
    const rows = await withTransaction(
      pool,
      async (client) => {
        await lockFeed(client, 'epss');
        const replaced = await replaceEpssScores(
          client,
          [opened.body, opened.decode, csv],
          () => csv.meta.scoreDate,
        );
        if ('duplicate' in replaced) throw malformed(`a CVE is listed twice (${replaced.duplicate})`);
        const inserted = replaced.inserted;
        // Every score may have moved: check every triaged case against its snapshot (docs/cases.md#triage-on-a-case).
        await markStaleForCves(client, null);
        await recordImport(client, 'epss', origin, inserted);
        return inserted;
      },
      // The file is read as the transaction goes: a second run would find it spent.
      { retryOnLostConnection: false },
    ).finally(() => opened.body.destroy()); // closes the file or download if we failed before its end
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
