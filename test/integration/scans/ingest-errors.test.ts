import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { problemDocument } from '../../helpers/problem.js';

const FIXTURES = path.resolve('test/fixtures/scans');
const nessus = readFileSync(path.join(FIXTURES, 'nessus/nessus_v_unknown.xml'));
const small = readFileSync(path.join(FIXTURES, 'openvas/one_vuln.xml'));
/** The plan limit of this file's app: SCAN_MAX_BYTES caps every plan. */
const LIMIT = 200_000;

let t: ScanTestApp;
let key: string;
let workspaceId: string;

beforeAll(async () => {
  // Small batches, so a broken file has stored rows before the break that must be removed.
  t = await startScanApp({ env: { SCAN_MAX_BYTES: String(LIMIT) }, batchSize: 5 });
  ({ key, workspaceId } = await signUp(t.app));
});
afterAll(async () => {
  await t?.close();
});

/** Files of this workspace left in storage (committed or partial). */
async function storedFiles(): Promise<string[]> {
  try {
    return await readdir(path.join(t.storageDir, workspaceId));
  } catch {
    return [];
  }
}

const upload = (payload: Buffer | string | Readable, headers: Record<string, string> = {}, query = '') =>
  t.app.inject({
    method: 'POST',
    url: `/api/pipeline/scan${query}`,
    headers: { 'x-api-key': key, 'content-type': 'application/xml', ...headers },
    payload,
  });

describe('upload errors', () => {
  it('413 before reading the body when Content-Length is over the plan limit', async () => {
    const res = await upload(nessus);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual(
      problemDocument(
        413,
        'payload_too_large',
        'Payload too large',
        `The scan is larger than your plan allows (${LIMIT} bytes).`,
      ),
    );
    expect(await storedFiles()).toEqual([]);
  });

  it('413 mid-stream when no Content-Length is sent, and the partial file is deleted', async () => {
    const res = await upload(
      Readable.from([
        nessus.subarray(0, 100_000),
        nessus.subarray(100_000, 300_000),
        nessus.subarray(300_000),
      ]),
    );
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
    expect(res.headers.connection).toBe('close');
    expect(await storedFiles()).toEqual([]);
  });

  it('413 when a small gzip body inflates past the limit (a gzip bomb is cut off)', async () => {
    const { gzipSync } = await import('node:zlib');
    const bomb = gzipSync(Buffer.alloc(5 * LIMIT, 0x20));
    expect(bomb.length).toBeLessThan(LIMIT);
    const res = await upload(bomb, { 'content-encoding': 'gzip' });
    expect(res.statusCode).toBe(413);
    expect(await storedFiles()).toEqual([]);
  });

  it('415 unsupported_format for content no parser recognises, and the file is deleted', async () => {
    const res = await upload('<html><body>not a scan</body></html>');
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual(
      problemDocument(
        415,
        'unsupported_format',
        'Unsupported scan format',
        'The scan format could not be recognised. Supported: Nessus v2, Qualys, OpenVAS/Greenbone, SARIF 2.1.0, CycloneDX, CLI findings JSON/JSON Lines; pass format= to force one.',
      ),
    );
    expect(await storedFiles()).toEqual([]);
  });

  it('415 unsupported_media_type for a content type the route does not take', async () => {
    const res = await upload('a,b,c', { 'content-type': 'text/csv' });
    expect(res.statusCode).toBe(415);
    expect(res.json().code).toBe('unsupported_media_type');
  });

  it('400 for an empty body, an invalid format override and a malformed Idempotency-Key', async () => {
    const empty = await upload('');
    expect(empty.statusCode).toBe(400);
    expect(empty.json().detail).toBe('The scan file is empty.');
    const badFormat = await upload(small, {}, '?format=pdf');
    expect(badFormat.statusCode).toBe(400);
    expect(badFormat.json().errors).toEqual([
      {
        path: '/querystring/format',
        message: 'must be one of nessus, qualys, openvas, sarif, cyclonedx, cli',
      },
    ]);
    const badKey = await upload(small, { 'idempotency-key': 'x'.repeat(300) });
    expect(badKey.statusCode).toBe(400);
  });
});

describe('broken and hostile files', () => {
  it('a truncated Nessus file fails with a position, and no finding of it is stored', async () => {
    const truncated = nessus.subarray(0, 150_000);
    const res = await upload(truncated);
    expect(res.statusCode).toBe(202);
    const done = await waitForScan(t.app, key, res.json().scanId);
    expect(done.status).toBe('failed');
    const error = done.error as { code: string; message: string; line: number; column: number };
    expect(error.code).toBe('unparseable_scan');
    expect(error.line).toBeGreaterThan(1);
    expect(error.column).toBeGreaterThanOrEqual(0);
    expect(done.counts).toMatchObject({ findings: 0, new: 0, duplicate: 0 });
    const rows = await t.infra.pool.query(
      `SELECT (SELECT count(*) FROM findings WHERE scan_id = $1)::int AS f, (SELECT count(*) FROM findings WHERE scan_id = $1 AND raw_excerpt <> '')::int AS e`,
      [res.json().scanId],
    );
    expect(rows.rows[0]).toEqual({ f: 0, e: 0 });
    expect(await storedFiles()).toEqual([]);
  });

  it('an external entity is neither fetched nor expanded: the scan fails at the DOCTYPE and stores nothing', async () => {
    const xxe = `<?xml version="1.0"?>
<!DOCTYPE NessusClientData_v2 [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<NessusClientData_v2><Report name="r"><ReportHost name="h"><HostProperties><tag name="host-ip">10.0.0.1</tag></HostProperties>
<ReportItem port="0" svc_name="general" protocol="tcp" severity="2" pluginID="1" pluginName="x"><description>&x;</description></ReportItem>
</ReportHost></Report></NessusClientData_v2>`;
    const res = await upload(xxe);
    expect(res.statusCode).toBe(202);
    const done = await waitForScan(t.app, key, res.json().scanId);
    // Refused at the DOCTYPE, before any entity could be resolved (hostile-uploads.test.ts checks the message and position).
    expect(done.status).toBe('failed');
    expect((done.error as { code: string }).code).toBe('unparseable_scan');
    const f = await t.infra.pool.query(`SELECT count(*)::int AS n FROM findings WHERE scan_id = $1`, [
      res.json().scanId,
    ]);
    expect(f.rows[0].n).toBe(0);
  });

  it('billion laughs fails cleanly, and the worker goes on to complete the next upload', async () => {
    const lol = `<?xml version="1.0"?>
<!DOCTYPE NessusClientData_v2 [
 <!ENTITY a "lollollollollollollollollollol">
 <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
 <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
 <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
 <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
 <!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">
 <!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">
 <!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">
]>
<NessusClientData_v2><Report name="r"><ReportHost name="h">
<ReportItem port="0" protocol="tcp" severity="2" pluginID="1" pluginName="&h;"><description>&h;</description></ReportItem>
</ReportHost></Report></NessusClientData_v2>`;
    const res = await upload(lol);
    const done = await waitForScan(t.app, key, res.json().scanId);
    expect(done.status).toBe('failed');
    expect((done.error as { code: string }).code).toBe('unparseable_scan');

    const next = await upload(small);
    const ok = await waitForScan(t.app, key, next.json().scanId);
    expect(ok).toMatchObject({ status: 'completed', counts: { findings: 1 } });
  });

  it('a CycloneDX BOM forced as CLI findings or SARIF fails saying what it is, not completes empty', async () => {
    const bom = readFileSync(path.join(FIXTURES, 'cyclonedx/jake2.json'));
    for (const [format, not] of [
      ['cli', 'CLI findings'],
      ['sarif', 'a SARIF log'],
    ] as const) {
      const res = await upload(bom, { 'content-type': 'application/json' }, `?format=${format}`);
      expect(res.statusCode).toBe(202);
      const done = await waitForScan(t.app, key, res.json().scanId);
      expect(done.status).toBe('failed');
      expect(done.counts).toMatchObject({ findings: 0 });
      expect(done.error).toMatchObject({
        code: 'unparseable_scan',
        message: `The file looks like a CycloneDX BOM, not ${not}: read as format=${format} it has no findings. Upload it without format= (it is detected as cyclonedx) or with format=cyclonedx.`,
      });
    }
    // Pretty-printed, the JSON Lines reading breaks on line 1: the reason still names the format.
    const pretty = readFileSync(path.join(FIXTURES, 'cyclonedx/valid-vulnerability-1.4.json'));
    const res = await upload(pretty, { 'content-type': 'application/json' }, '?format=cli');
    const done = await waitForScan(t.app, key, res.json().scanId);
    expect(done.status).toBe('failed');
    expect((done.error as { message: string }).message).toMatch(
      /^The file looks like a CycloneDX BOM, not CLI findings \(format=cli\): /,
    );
  });

  it('JSON sent as XML with a forced format fails with a clear reason', async () => {
    const res = await upload('{"runs": []}', {}, '?format=nessus');
    const done = await waitForScan(t.app, key, res.json().scanId);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({
      code: 'unparseable_scan',
      message: 'The file is JSON, not XML.',
      line: 1,
      column: 1,
    });
  });
});
