import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueBackends } from '../../helpers/db.js';
import { signUp } from '../../helpers/test-app.js';
import { problemDocument } from '../../helpers/problem.js';
import { startScanApp, uploadScan, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';

/*
 * CycloneDX and CLI findings end to end with the format detected from content, and the media
 * types an upload may declare (docs/ingestion.md#upload). Expected counts are read from the files here, with
 * JSON.parse and regexes, never through our parser.
 */

const CYCLONEDX_DIR = path.resolve('test/fixtures/scans/cyclonedx');
const OWN = path.resolve('test/fixtures/parsers');

interface Expected {
  findings: number;
  /** Distinct (vulnerability id, affected ref) pairs: the cases a first upload creates. */
  distinct: number;
}

/** One finding per vulnerability and distinct affected ref, or one for the BOM's subject when it names none. */
function countPairs(pairs: string[][]): Expected {
  const keys = pairs.flatMap(([id, ...refs]) =>
    refs.length > 0 ? refs.map((r) => `${id}|${r}`) : [`${id}|`],
  );
  return { findings: keys.length, distinct: new Set(keys).size };
}

/** CycloneDX expectations straight from the file: JSON `vulnerabilities[].affects[].ref`, XML `vulnerability/affects/target/ref` (or the 1.x extension's `ref` attribute). */
function cyclonedxExpected(text: string): Expected {
  if (text.trimStart().startsWith('{')) {
    const bom = JSON.parse(text) as { vulnerabilities?: { id?: string; affects?: { ref: string }[] }[] };
    return countPairs(
      (bom.vulnerabilities ?? []).map((v) => [v.id ?? '', ...new Set((v.affects ?? []).map((a) => a.ref))]),
    );
  }
  const blocks = [...text.matchAll(/<(?:\w+:)?vulnerability\b([^>]*)>([\s\S]*?)<\/(?:\w+:)?vulnerability>/g)];
  return countPairs(
    blocks.map(([, attrs, body]) => {
      const id = /<(?:\w+:)?id>([^<]*)</.exec(body!)?.[1] ?? '';
      const targets = [...body!.matchAll(/<(?:\w+:)?target>\s*<(?:\w+:)?ref>([^<]*)</g)].map((m) => m[1]!);
      const extensionRef = /\bref="([^"]*)"/.exec(attrs!)?.[1];
      const refs = targets.length > 0 ? targets : extensionRef ? [extensionRef] : [];
      return [id, ...new Set(refs)];
    }),
  );
}

const CYCLONEDX_FILES = [
  ...readdirSync(CYCLONEDX_DIR)
    .sort()
    .map((f) => path.join(CYCLONEDX_DIR, f)),
  path.join(OWN, 'cyclonedx-1.6.json'),
].map((file) => {
  const body = readFileSync(file);
  return {
    name: path.basename(file),
    body,
    contentType: file.endsWith('.xml') ? 'application/xml' : 'application/json',
    expected: cyclonedxExpected(body.toString('utf8')),
  };
});

interface CliFinding {
  title: string;
  severity: string;
}
const cliJson = readFileSync(path.join(OWN, 'cli-findings.json'));
const cliLines = readFileSync(path.join(OWN, 'cli-findings.jsonl'));
const CLI_FILES = [
  {
    name: 'cli-findings.json',
    body: cliJson,
    contentType: 'application/json',
    findings: (JSON.parse(cliJson.toString('utf8')) as { findings: CliFinding[] }).findings,
  },
  {
    name: 'cli-findings.jsonl',
    body: cliLines,
    contentType: 'application/x-ndjson',
    findings: cliLines
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as CliFinding),
  },
];

const bySeverity = (findings: CliFinding[]) => {
  const counts: Record<string, number> = { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0, INFO: 0 };
  for (const f of findings) counts[f.severity.toUpperCase()]! += 1;
  return counts;
};

const backends = queueBackends('scans/upload-formats');

describe.each(backends)('upload formats and media types on $name', ({ name, redisUrl }) => {
  const skip = name === 'Redis' && !redisUrl;
  let t: ScanTestApp;
  let key: string;

  beforeAll(async () => {
    if (skip) return;
    t = await startScanApp({ redisUrl });
    key = (await signUp(t.app)).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Uploads and waits; `asset=` makes every hostless finding of the upload its own case. */
  const ingest = async (body: Buffer, contentType: string, asset: string) => {
    const res = await uploadScan(t.app, key, body, { 'content-type': contentType }, `?asset=${asset}`);
    expect(res.statusCode).toBe(202);
    return waitForScan(t.app, key, (res.json() as { scanId: string }).scanId);
  };

  describe('CycloneDX, format detected from content', () => {
    it.skipIf(skip).each(CYCLONEDX_FILES)('$name completes with the counts of the file', async (file) => {
      expect(file.expected.findings).toBeGreaterThanOrEqual(0);
      const done = await ingest(file.body, file.contentType, `cdx-${name}-${file.name}`);
      const counts = done.counts as {
        findings: number;
        new: number;
        duplicate: number;
        bySeverity: Record<string, number>;
      };
      expect(done).toMatchObject({
        status: 'completed',
        format: 'cyclonedx',
        error: null,
        bytes: file.body.length,
      });
      expect(counts).toMatchObject({
        findings: file.expected.findings,
        new: file.expected.distinct,
        duplicate: file.expected.findings - file.expected.distinct,
      });
      expect(Object.values(counts.bySeverity).reduce((a, b) => a + b, 0)).toBe(file.expected.findings);
      if (file.expected.findings === 0) {
        expect(done.notes).toEqual([
          expect.stringMatching(/^BOM has \d+ components but no vulnerabilities$/),
        ]);
      }
    });

    it.skipIf(skip)(
      'the hand-written CycloneDX 1.6 BOM: four findings, one suppressed by its VEX analysis',
      async () => {
        const file = CYCLONEDX_FILES.find((f) => f.name === 'cyclonedx-1.6.json')!;
        expect(file.expected).toEqual({ findings: 4, distinct: 4 });
        const done = await ingest(file.body, 'application/json', `cdx16-${name}`);
        expect(done).toMatchObject({
          status: 'completed',
          format: 'cyclonedx',
          counts: { findings: 4, new: 4, duplicate: 0, bySeverity: { HIGH: 1, MEDIUM: 1, LOW: 2 } },
        });
        const rows = await t.infra.pool.query<{ title: string; suppressed: boolean }>(
          `SELECT title, suppressed FROM findings WHERE scan_id = $1 ORDER BY record_index`,
          [done.scanId],
        );
        expect(rows.rows).toEqual([
          { title: 'CVE-2024-45296 in path-to-regexp@0.1.7', suppressed: false },
          { title: 'CVE-2024-47764 in cookie@0.5.0', suppressed: false },
          { title: 'CVE-2024-47764 in cookie@0.6.0', suppressed: false },
          { title: 'CVE-2024-43796 in express@4.18.2', suppressed: true },
        ]);
      },
    );
  });

  describe('CLI findings, format detected from content', () => {
    it.skipIf(skip).each(CLI_FILES)('$name completes with one finding per entry', async (file) => {
      expect(file.findings.length).toBeGreaterThan(0);
      const done = await ingest(file.body, file.contentType, `cli-${name}`);
      expect(done).toMatchObject({
        status: 'completed',
        format: 'cli',
        error: null,
        counts: {
          findings: file.findings.length,
          new: file.findings.length,
          duplicate: 0,
          bySeverity: bySeverity(file.findings),
        },
      });
      const titles = await t.infra.pool.query<{ title: string }>(
        `SELECT title FROM findings WHERE scan_id = $1 ORDER BY record_index`,
        [done.scanId],
      );
      expect(titles.rows.map((r) => r.title)).toEqual(file.findings.map((f) => f.title));
    });
  });

  describe('media types', () => {
    const sarif = readFileSync(path.resolve('test/fixtures/scans/sarif/appendix_k.sarif'));
    const cdxJson = CYCLONEDX_FILES.find((f) => f.name === 'valid-vulnerability-1.4.json')!.body;
    const cdxXml = CYCLONEDX_FILES.find((f) => f.name === 'valid-vulnerability-1.4.xml')!.body;

    it.skipIf(skip).each([
      { contentType: 'application/sarif+json', body: sarif, format: 'sarif' },
      { contentType: 'application/vnd.cyclonedx+json', body: cdxJson, format: 'cyclonedx' },
      { contentType: 'application/vnd.cyclonedx+xml', body: cdxXml, format: 'cyclonedx' },
      { contentType: 'application/vnd.cyclonedx+json; version=1.4', body: cdxJson, format: 'cyclonedx' },
      { contentType: 'Application/Vnd.CycloneDX+XML; charset=UTF-8', body: cdxXml, format: 'cyclonedx' },
      { contentType: 'application/x-ndjson', body: cliLines, format: 'cli' },
      { contentType: 'text/xml', body: cdxXml, format: 'cyclonedx' },
    ])('$contentType is accepted as an upload and parsed', async ({ contentType, body, format }) => {
      const done = await ingest(body, contentType, `media-${name}-${contentType}`);
      expect(done).toMatchObject({ status: 'completed', format, error: null, bytes: body.length });
    });

    it
      .skipIf(skip)
      .each(['text/csv', 'application/pdf', 'image/png', 'application/xml-dtd', 'application/json-seq'])(
      '%s is refused 415 unsupported_media_type, naming what is accepted',
      async (contentType) => {
        const res = await uploadScan(t.app, key, cdxJson, { 'content-type': contentType });
        expect(res.statusCode).toBe(415);
        expect(res.json()).toEqual(
          problemDocument(
            415,
            'unsupported_media_type',
            'Unsupported media type',
            `Send the scan as application/xml, text/xml, application/json, application/x-ndjson, any +xml or +json type (such as application/vnd.cyclonedx+json), application/octet-stream, application/gzip or multipart/form-data (field "file"), not ${contentType}.`,
          ),
        );
      },
    );
  });
});
