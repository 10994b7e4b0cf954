import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { markStaleWithCves } from '../cases/case-triage-store.js';
import { lockFeed, recordImport, writeCisaSsvc } from './enrichment-store.js';
import { malformed } from './import-error.js';
import { runImport, type ImportResultBase } from './import-run.js';
import { openSource, type EnrichmentSource, type OpenSourceOptions } from './source.js';
import type { CisaSsvc } from './types.js';
import { parseVulnrichmentRecord } from './vulnrichment-record.js';

export interface VulnrichmentImportResult extends ImportResultBase {
  source: 'vulnrichment';
  /** CVE records read. */
  records: number;
  /** Records without a CISA SSVC decision (left as they were). */
  unscored: number;
}

const FLUSH_EVERY = 1_000;
/** A record file in CISA's repository layout (`YEAR/NNxxx/CVE-YYYY-NNNN.json`). */
const RECORD_FILE = /^CVE-\d{4}-\d{4,}\.json$/i;

/**
 * Loads CISA's SSVC decisions from Vulnrichment (docs/triage.md#enrichment): a folder of CVE JSON 5
 * records (a checkout of CISA's repository, read recursively), or a file or URL of JSON Lines with
 * one record a line (gzip detected). Incremental, like NVD: CVEs absent from the source keep their
 * decision, and a stored decision is replaced only by one CISA scored later. One transaction, so
 * a malformed record anywhere changes nothing.
 */
export async function importVulnrichment(
  pool: Pool,
  source: EnrichmentSource,
  options: OpenSourceOptions = {},
): Promise<VulnrichmentImportResult> {
  return runImport('vulnrichment', source, async (origin) => {
    const started = performance.now();
    const counts = { rows: 0, records: 0, unscored: 0 };
    await withTransaction(
      pool,
      async (client) => {
        await lockFeed(client, 'vulnrichment');
        let pending = new Map<string, { cveId: string } & CisaSsvc>();
        const add = async (raw: unknown, where: string): Promise<void> => {
          const { cveId, ssvc } = parseVulnrichmentRecord(raw, where);
          counts.records++;
          if (ssvc === null) {
            counts.unscored++;
            return;
          }
          counts.rows++;
          pending.set(cveId, { cveId, ...ssvc });
          if (pending.size >= FLUSH_EVERY) await flush();
        };
        const flush = async (): Promise<void> => {
          const batch = [...pending.values()];
          pending = new Map();
          // A new or changed CISA decision can change a triaged case's answer (docs/cases.md#stale-triage).
          await markStaleWithCves(client, await writeCisaSsvc(client, batch));
        };
        const folder = await folderOf(source);
        if (folder !== null) await readFolder(folder, add);
        else await readJsonLines(source, options, add);
        if (counts.records === 0) throw malformed('no CVE JSON 5 record found');
        await flush();
        await recordImport(client, 'vulnrichment', origin, counts.rows);
      },
      { retryOnLostConnection: false },
    );
    return { source: 'vulnrichment', origin, ...counts, durationMs: Math.round(performance.now() - started) };
  });
}

/** The folder a file source names, or null when it is a file or a URL. */
async function folderOf(source: EnrichmentSource): Promise<string | null> {
  if (!('file' in source)) return null;
  const s = await stat(source.file).catch(() => null);
  return s?.isDirectory() ? source.file : null;
}

async function readFolder(
  folder: string,
  add: (raw: unknown, where: string) => Promise<void>,
): Promise<void> {
  const names = (await readdir(folder, { recursive: true }))
    .filter((name) => RECORD_FILE.test(path.basename(name)))
    .sort();
  for (const name of names) {
    const text = await readFile(path.join(folder, name), 'utf8');
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw malformed(`not JSON (${(err as Error).message})`, name);
    }
    await add(raw, name);
  }
}

async function readJsonLines(
  source: EnrichmentSource,
  options: OpenSourceOptions,
  add: (raw: unknown, where: string) => Promise<void>,
): Promise<void> {
  const opened = await openSource(source, options);
  // An error of the download or of gunzip ends the iteration below with that error.
  opened.body.on('error', (err) => opened.decode.destroy(err));
  try {
    let n = 0;
    for await (const line of lines(opened.body.pipe(opened.decode))) {
      n++;
      if (line.trim() === '') continue;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (err) {
        throw malformed(`not JSON (${(err as Error).message})`, `line ${n}`);
      }
      await add(raw, `line ${n}`);
    }
  } finally {
    opened.body.destroy();
  }
}

/** The lines of a byte stream, without their line ends. */
async function* lines(input: Readable): AsyncGenerator<string> {
  let rest = '';
  input.setEncoding('utf8');
  for await (const chunk of input as AsyncIterable<string>) {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop()!;
    for (const part of parts) yield part.replace(/\r$/, '');
  }
  if (rest !== '') yield rest;
}
