import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEpss } from '../../../src/domain/enrichment/epss-import.js';
import { findEnrichment } from '../../../src/domain/enrichment/enrichment-store.js';
import {
  EPSS_SAMPLE,
  importLog,
  LOCAL,
  openEnrichmentDb,
  scratchDir,
  startFeedServer,
  type EnrichmentDb,
  type FakeFeedServer,
} from './enrichment-db.js';

// The shared sample: 29 rows after its comment line and header (counted with python's csv module),
// score_date 2026-09-29, model v2026.06.15; CVE-1999-0010 is 0.02371 / 0.83169.

let db: EnrichmentDb;
let scratch: Awaited<ReturnType<typeof scratchDir>>;
let server: FakeFeedServer;
let noCommentGz: Buffer;

beforeAll(async () => {
  db = await openEnrichmentDb();
  scratch = await scratchDir();
  noCommentGz = gzipSync(await readFile(path.join(LOCAL, 'epss-no-comment.csv')));
  server = await startFeedServer({
    '/epss_scores-current.csv.gz': { body: noCommentGz, contentType: 'application/gzip' },
    '/sample.csv': { body: await readFile(EPSS_SAMPLE), contentType: 'text/csv' },
    '/broken.csv.gz': { body: noCommentGz.subarray(0, noCommentGz.length - 12) },
    '/stalled.csv': { body: 'cve,epss,percentile\nCVE-2021-44228,0.9,0.9\n', stall: true },
  });
});

afterAll(async () => {
  await server?.close();
  await db?.close();
  await scratch?.cleanup();
});

interface ScoreRow {
  cve_id: string;
  epss: number;
  percentile: number;
  score_date: string | null;
}

async function scores(): Promise<ScoreRow[]> {
  const { rows } = await db.pool.query<ScoreRow>(
    `SELECT cve_id, epss, percentile, to_char(score_date, 'YYYY-MM-DD') AS score_date FROM epss_scores ORDER BY cve_id`,
  );
  return rows;
}

const NO_COMMENT_ROWS: ScoreRow[] = [
  { cve_id: 'CVE-1999-0001', epss: 0.02, percentile: 0.8, score_date: null },
  { cve_id: 'CVE-2021-44228', epss: 0.94358, percentile: 0.99989, score_date: null },
  { cve_id: 'CVE-2099-0001', epss: 0.1, percentile: 0.93001, score_date: null },
  { cve_id: 'CVE-2099-0002', epss: 0.00043, percentile: 0.1152, score_date: null },
  { cve_id: 'CVE-2099-0003', epss: 0.5, percentile: 1, score_date: null },
];

describe('EPSS import', () => {
  it('loads the real sample with its comment line and takes score_date from it', async () => {
    const result = await importEpss(db.pool, { file: EPSS_SAMPLE });
    expect(result).toMatchObject({
      source: 'epss',
      origin: 'epss_scores-sample.csv',
      rows: 29,
      scoreDate: '2026-09-29',
      modelVersion: 'v2026.06.15',
    });
    const rows = await scores();
    expect(rows).toHaveLength(29);
    expect(rows[0]).toEqual({
      cve_id: 'CVE-1999-0001',
      epss: 0.03351,
      percentile: 0.88255,
      score_date: '2026-09-29',
    });
    expect(rows.find((r) => r.cve_id === 'CVE-1999-0010')).toEqual({
      cve_id: 'CVE-1999-0010',
      epss: 0.02371,
      percentile: 0.83169,
      score_date: '2026-09-29',
    });
    expect(rows.at(-1)).toEqual({
      cve_id: 'CVE-1999-0030',
      epss: 0.01061,
      percentile: 0.6322,
      score_date: '2026-09-29',
    });
    // The lookup (triage prompts, the console's case page) carries the date a score is of.
    const [found] = await findEnrichment(db.pool, ['CVE-1999-0010']);
    expect(found).toMatchObject({ epss: 0.02371, epssPercentile: 0.83169, epssDate: '2026-09-29' });
    expect((await importLog(db.pool)).at(-1)).toEqual({
      source: 'epss',
      origin: 'epss_scores-sample.csv',
      rows: 29,
    });
  });

  it('replaces all scores on reload, from a file without the comment line (ids upper-cased)', async () => {
    await importEpss(db.pool, { file: EPSS_SAMPLE });
    const result = await importEpss(db.pool, { file: path.join(LOCAL, 'epss-no-comment.csv') });
    expect(result).toMatchObject({ rows: 5, scoreDate: null, modelVersion: null });
    expect(await scores()).toEqual(NO_COMMENT_ROWS);
  });

  it('serialises overlapping imports: both succeed and the last one to commit wins', async () => {
    const results = await Promise.all([
      importEpss(db.pool, { file: EPSS_SAMPLE }),
      importEpss(db.pool, { file: path.join(LOCAL, 'epss-no-comment.csv') }),
      importEpss(db.pool, { file: EPSS_SAMPLE }),
    ]);
    expect(results.map((r) => r.rows)).toEqual([29, 5, 29]);
    const last = (await importLog(db.pool)).at(-1);
    expect((await scores()).length).toBe(last?.rows);
  });

  it('detects gzip by its magic bytes, whatever the file is called', async () => {
    const misleading = path.join(scratch.dir, 'scores.csv');
    await writeFile(misleading, noCommentGz);
    await importEpss(db.pool, { file: EPSS_SAMPLE });
    expect(await importEpss(db.pool, { file: misleading })).toMatchObject({ rows: 5, origin: 'scores.csv' });
    expect(await scores()).toEqual(NO_COMMENT_ROWS);
    const plainNamedGz = path.join(scratch.dir, 'plain.csv.gz');
    await writeFile(plainNamedGz, await readFile(EPSS_SAMPLE));
    expect(await importEpss(db.pool, { file: plainNamedGz })).toMatchObject({
      rows: 29,
      scoreDate: '2026-09-29',
    });
  });

  it('rejects a bad value with its line number and keeps the previous scores', async () => {
    await importEpss(db.pool, { file: path.join(LOCAL, 'epss-no-comment.csv') });
    const logged = (await importLog(db.pool)).length;
    await expect(importEpss(db.pool, { file: path.join(LOCAL, 'epss-bad-value.csv') })).rejects.toMatchObject(
      {
        name: 'EnrichmentImportError',
        code: 'malformed_input',
        message:
          'epss import from epss-bad-value.csv failed: line 5: epss "1.70000" is not a number in [0, 1]',
      },
    );
    expect(await scores()).toEqual(NO_COMMENT_ROWS);
    expect((await importLog(db.pool)).length).toBe(logged);
    // The connection that saw the aborted COPY is back in the pool and usable.
    for (let i = 0; i < 5; i++) await importEpss(db.pool, { file: EPSS_SAMPLE });
    expect(await scores()).toHaveLength(29);
  });

  it('rejects a file without the EPSS header, a duplicated CVE and an empty file', async () => {
    await importEpss(db.pool, { file: EPSS_SAMPLE });
    const cases: Array<[string, string, string]> = [
      [
        'no-header.csv',
        'CVE-2021-44228,0.9,0.9\n',
        'line 1: expected the header "cve,epss,percentile", got "CVE-2021-44228,0.9,0.9"',
      ],
      [
        'dup.csv',
        'cve,epss,percentile\nCVE-2021-44228,0.9,0.9\ncve-2021-44228,0.8,0.8\n',
        'a CVE is listed twice (CVE-2021-44228)',
      ],
      [
        'header-only.csv',
        '#model_version:v1,score_date:2026-09-30T00:00:00Z\ncve,epss,percentile\n',
        'the file has no scores',
      ],
      ['empty.csv', '', 'no "cve,epss,percentile" header: not an EPSS file'],
      [
        'fields.csv',
        'cve,epss,percentile\nCVE-2021-44228,0.9\n',
        'line 2: expected 3 fields (cve,epss,percentile), got 2',
      ],
    ];
    for (const [name, text, reason] of cases) {
      const file = path.join(scratch.dir, name);
      await writeFile(file, text);
      await expect(importEpss(db.pool, { file })).rejects.toMatchObject({
        code: 'malformed_input',
        message: `epss import from ${name} failed: ${reason}`,
      });
    }
    expect(await scores()).toHaveLength(29);
  });

  it('imports from an http URL serving gzip, without credentials or query in the recorded origin', async () => {
    await importEpss(db.pool, { file: EPSS_SAMPLE });
    const url = new URL(`${server.baseUrl}/epss_scores-current.csv.gz?token=secret`);
    url.username = 'feed';
    url.password = 'p@ss';
    const result = await importEpss(db.pool, { url: url.toString() });
    expect(result).toMatchObject({ rows: 5, origin: `${server.baseUrl}/epss_scores-current.csv.gz` });
    expect(await scores()).toEqual(NO_COMMENT_ROWS);
    expect(server.requests.at(-1)).toEqual({
      url: '/epss_scores-current.csv.gz?token=secret',
      authorization: `Basic ${Buffer.from('feed:p@ss').toString('base64')}`,
    });
    const log = await importLog(db.pool);
    expect(log.at(-1)).toEqual({
      source: 'epss',
      origin: `${server.baseUrl}/epss_scores-current.csv.gz`,
      rows: 5,
    });
    expect(JSON.stringify(log)).not.toContain('secret');
  });

  it('imports a plain CSV from a URL', async () => {
    expect(await importEpss(db.pool, { url: `${server.baseUrl}/sample.csv` })).toMatchObject({ rows: 29 });
  });

  it('keeps the previous scores when the server answers 404 or sends a truncated gzip', async () => {
    await importEpss(db.pool, { file: path.join(LOCAL, 'epss-no-comment.csv') });
    await expect(
      importEpss(db.pool, { url: `${server.baseUrl}/missing.csv.gz?sig=x` }),
    ).rejects.toMatchObject({
      code: 'source_unavailable',
      message: `epss import from ${server.baseUrl}/missing.csv.gz failed: the server answered HTTP 404`,
    });
    await expect(importEpss(db.pool, { url: `${server.baseUrl}/broken.csv.gz` })).rejects.toMatchObject({
      code: 'malformed_input',
      message: expect.stringMatching(
        /^epss import from http:\/\/127\.0\.0\.1:\d+\/broken\.csv\.gz failed: corrupt gzip data/,
      ),
    });
    expect(await scores()).toEqual(NO_COMMENT_ROWS);
  });

  it('gives up on a server that stops sending, after timeoutMs, and keeps the previous scores', async () => {
    await importEpss(db.pool, { file: path.join(LOCAL, 'epss-no-comment.csv') });
    const started = Date.now();
    await expect(
      importEpss(db.pool, { url: `${server.baseUrl}/stalled.csv` }, { timeoutMs: 300 }),
    ).rejects.toMatchObject({
      code: 'source_unavailable',
      message: `epss import from ${server.baseUrl}/stalled.csv failed: the download timed out`,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await scores()).toEqual(NO_COMMENT_ROWS);
  });

  it('rejects unsupported URL schemes', async () => {
    await expect(importEpss(db.pool, { url: 'ftp://127.0.0.1/epss.csv' })).rejects.toMatchObject({
      code: 'invalid_source',
      message: 'epss import from ftp://127.0.0.1/epss.csv failed: unsupported URL scheme ftp:',
    });
  });
});
