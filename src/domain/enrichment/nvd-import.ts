import type { Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { markStaleForCves } from '../cases/case-triage-store.js';
import { malformed } from './import-error.js';
import { lockFeed, recordImport, writeCvssScores } from './enrichment-store.js';
import { runImport, type ImportResultBase } from './import-run.js';
import { readJsonFeed } from './json-feed.js';
import { parseNvdVulnerability, type NvdRecord } from './nvd-cvss.js';
import { openSource, type EnrichmentSource, type OpenSourceOptions } from './source.js';

export interface NvdImportResult extends ImportResultBase {
  source: 'nvd';
  /** CVEs in the file without any CVSS metric (e.g. awaiting analysis): left as they were. */
  withoutMetrics: number;
  /** Rejected CVEs in the file; their stored scores were deleted. */
  rejected: number;
}

const FLUSH_EVERY = 1_000;
/** Parts of a CVE record (keys of `vulnerabilities[].cve`) we never read: not assembling them saves time on big dumps. */
const UNREAD = {
  depth: 2,
  keys: new Set(['descriptions', 'references', 'configurations', 'weaknesses', 'vendorComments']),
};

/**
 * Upserts CVSS base scores from an NVD CVE API 2.0 document (an API page or a
 * `nvdcve-2.0-*.json[.gz]` feed). Incremental: CVEs absent from the file keep their scores,
 * since NVD files are partial. The whole file is one transaction, written in batches as it
 * streams, so a file that turns out malformed halfway changes nothing.
 */
export async function importNvd(
  pool: Pool,
  source: EnrichmentSource,
  options: OpenSourceOptions = {},
): Promise<NvdImportResult> {
  return runImport('nvd', source, async (origin) => {
    const started = performance.now();
    const opened = await openSource(source, options);
    const counts = { rows: 0, withoutMetrics: 0, rejected: 0 };
    await withTransaction(
      pool,
      async (client) => {
        await lockFeed(client, 'nvd');
        let format: unknown;
        // Keyed by CVE, so a CVE listed twice in one batch is written once, with its last record.
        let pending = new Map<string, NvdRecord>();
        const flush = async (): Promise<void> => {
          const batch = pending;
          pending = new Map();
          const records = [...batch.values()];
          await writeCvssScores(
            client,
            records.flatMap((r) => (r.kind === 'score' ? [{ cveId: r.cveId, ...r.cvss }] : [])),
            records.flatMap((r) => (r.kind === 'rejected' ? [r.cveId] : [])),
          );
        };
        const feed = await readJsonFeed(
          opened,
          { fields: ['format'], itemsKey: 'vulnerabilities', skipInItems: UNREAD },
          async (ev) => {
            if (ev.kind === 'field') {
              format = ev.value;
              return;
            }
            const record = parseNvdVulnerability(ev.value, ev.index);
            counts[
              record.kind === 'score' ? 'rows' : record.kind === 'rejected' ? 'rejected' : 'withoutMetrics'
            ]++;
            pending.set(record.cveId, record);
            if (pending.size >= FLUSH_EVERY) await flush();
          },
        );
        if (format !== 'NVD_CVE')
          throw malformed('not an NVD CVE API 2.0 document: "format" is not "NVD_CVE"');
        if (!feed.sawItems) throw malformed('not an NVD CVE API 2.0 document: no vulnerabilities array');
        await flush();
        // A changed or withdrawn base score makes the cases triaged on the old one stale (docs/cases.md#stale-triage).
        await markStaleForCves(client, null);
        await recordImport(client, 'nvd', origin, counts.rows);
      },
      // The file is read as the transaction goes: a second run would find it spent.
      { retryOnLostConnection: false },
    ).finally(() => opened.body.destroy());
    return { source: 'nvd', origin, ...counts, durationMs: Math.round(performance.now() - started) };
  });
}
