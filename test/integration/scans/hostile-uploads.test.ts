import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { problemDocument } from '../../helpers/problem.js';
import {
  rowsOfScan,
  scanCount,
  startScanApp,
  storedFiles,
  uploadScan,
  waitForScan,
  type ScanTestApp,
} from '../../helpers/scan-app.js';

/*
 * Hostile XML and binary uploads end to end (docs/ingestion.md#parsing: "No external entity or DTD is ever
 * fetched or expanded"; nesting, text and attribute sizes bounded): HTTP upload, the real
 * scan-ingest worker and its Piscina parser threads. Each hostile scan must end `failed` with a
 * reason (and position), keep no finding, evidence, case or file, and leave the worker able to
 * complete the next upload.
 */

const small = readFileSync(path.resolve('test/fixtures/scans/openvas/one_vuln.xml'));

/** The parse limits of DEFAULT_LIMITS (src/parsers/types.ts), as the messages state them. */
const MAX_DEPTH = 256;

let t: ScanTestApp;
let key: string;
let workspaceId: string;
/** A DTD server on 127.0.0.1 that records every request: none may ever arrive. */
let dtdServer: http.Server;
let dtdUrl: string;
const dtdRequests: string[] = [];

beforeAll(async () => {
  dtdServer = http.createServer((req, res) => {
    dtdRequests.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/xml-dtd' });
    res.end('<!ENTITY exfil SYSTEM "file:///etc/passwd">');
  });
  await new Promise<void>((resolve) => dtdServer.listen(0, '127.0.0.1', resolve));
  dtdUrl = `http://127.0.0.1:${(dtdServer.address() as AddressInfo).port}/evil.dtd`;
  // Default SCAN_MAX_BYTES (2 GiB): the 50 MB attribute must get past the upload to the parser.
  t = await startScanApp({ batchSize: 5 });
  ({ key, workspaceId } = await signUp(t.app));
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => dtdServer?.close(resolve));
});

const upload = (payload: Buffer | string | Readable, headers: Record<string, string> = {}, query = '') =>
  uploadScan(t.app, key, payload, headers, query);

/** A Nessus document with one ReportItem whose description is `description` (raw XML). */
const nessusWith = (doctype: string, description: string) => `<?xml version="1.0"?>
${doctype}
<NessusClientData_v2><Report name="r"><ReportHost name="h"><HostProperties><tag name="host-ip">10.0.0.1</tag></HostProperties>
<ReportItem port="0" svc_name="general" protocol="tcp" severity="2" pluginID="1" pluginName="x"><description>${description}</description></ReportItem>
</ReportHost></Report></NessusClientData_v2>`;

/**
 * Uploads `payload`, waits for the worker, and checks the scan failed with `error` and left
 * nothing behind; then checks the worker still completes an ordinary upload.
 */
async function expectFailsCleanly(
  payload: Buffer | string | Readable,
  error: { message: string | RegExp; line: unknown; column: unknown },
  query = '',
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const res = await upload(payload, headers, query);
  expect(res.statusCode).toBe(202);
  const scanId = (res.json() as { scanId: string }).scanId;
  const done = await waitForScan(t.app, key, scanId);
  expect(done).toMatchObject({
    status: 'failed',
    counts: { findings: 0, new: 0, duplicate: 0 },
    error: {
      code: 'unparseable_scan',
      message: typeof error.message === 'string' ? error.message : expect.stringMatching(error.message),
      line: error.line,
      column: error.column,
    },
  });
  expect(await rowsOfScan(t, scanId)).toEqual({ findings: 0, evidence: 0, cases: 0 });
  expect((await storedFiles(t, workspaceId)).filter((f) => f.startsWith(scanId))).toEqual([]);

  const next = await upload(small);
  expect(next.statusCode).toBe(202);
  const ok = await waitForScan(t.app, key, (next.json() as { scanId: string }).scanId);
  expect(ok).toMatchObject({ status: 'completed', error: null, counts: { findings: 1 } });
  return done;
}

/** Line and 1-based column just past the first occurrence of `marker` in `text`. */
function positionAfter(text: string, marker: string): { line: number; column: number } {
  const end = text.indexOf(marker) + marker.length;
  const before = text.slice(0, end).split('\n');
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

describe('DTDs and entities are never fetched or expanded', () => {
  it('a DOCTYPE naming a remote DTD whose entity the document uses: the DTD is not fetched and the scan fails on the undefined entity', async () => {
    const doc = nessusWith(`<!DOCTYPE NessusClientData_v2 SYSTEM "${dtdUrl}">`, '&exfil;');
    const at = positionAfter(doc, '&exfil;');
    await expectFailsCleanly(doc, {
      message: `The XML is not well-formed: it references an undefined entity (only &lt; &gt; &amp; &apos; &quot; and character references are known); DTD-declared entities are never expanded (line ${at.line}, column ${at.column}).`,
      line: at.line,
      column: at.column,
    });
    expect(dtdRequests).toEqual([]);
  });

  it('a DOCTYPE naming a remote DTD that nothing uses is ignored, not fetched: the scan completes with its one finding', async () => {
    const res = await upload(nessusWith(`<!DOCTYPE NessusClientData_v2 SYSTEM "${dtdUrl}">`, 'plain text'));
    const done = await waitForScan(t.app, key, (res.json() as { scanId: string }).scanId);
    expect(done).toMatchObject({ status: 'completed', format: 'nessus', counts: { findings: 1 } });
    expect(dtdRequests).toEqual([]);
  });

  it('a parameter entity pulling the remote DTD into the internal subset is refused, not fetched', async () => {
    const doctype = `<!DOCTYPE NessusClientData_v2 [<!ENTITY % remote SYSTEM "${dtdUrl}"> %remote;]>`;
    const doc = nessusWith(doctype, '&exfil;');
    const at = positionAfter(doc, doctype);
    await expectFailsCleanly(doc, {
      message: `The DOCTYPE declares entities (<!ENTITY>); entity declarations are refused to prevent external-entity and entity-expansion attacks (line ${at.line}, column ${at.column}).`,
      line: at.line,
      column: at.column,
    });
    expect(dtdRequests).toEqual([]);
  });

  it('an external entity (XXE on file:///etc/passwd) fails the scan at the DOCTYPE, before any entity is resolved', async () => {
    const doctype = '<!DOCTYPE NessusClientData_v2 [<!ENTITY x SYSTEM "file:///etc/passwd">]>';
    const doc = nessusWith(doctype, '&x;');
    const at = positionAfter(doc, doctype);
    const done = await expectFailsCleanly(doc, {
      message: `The DOCTYPE declares entities (<!ENTITY>); entity declarations are refused to prevent external-entity and entity-expansion attacks (line ${at.line}, column ${at.column}).`,
      line: at.line,
      column: at.column,
    });
    expect(JSON.stringify(done)).not.toContain('root:');
  });
});

describe('size and shape limits', () => {
  it('100,000 nested elements fail at the depth limit with the position of the first element too deep', async () => {
    const depth = 100_000;
    const open = '<NessusClientData_v2>' + '<a>'.repeat(depth);
    const doc = `<?xml version="1.0"?>\n${open}${'</a>'.repeat(depth)}</NessusClientData_v2>`;
    // The root plus MAX_DEPTH - 1 <a> fill the limit: the next <a> is refused as it opens.
    const at = positionAfter(doc, '<NessusClientData_v2>' + '<a>'.repeat(MAX_DEPTH));
    await expectFailsCleanly(doc, {
      message: `XML nesting is deeper than the limit of ${MAX_DEPTH} elements (line ${at.line}, column ${at.column}).`,
      line: at.line,
      column: at.column,
    });
  });

  it('a 50 MB attribute value fails at the 8 MiB token limit', async () => {
    const attributeBytes = 50 * 1024 * 1024;
    const head = '<?xml version="1.0"?>\n<NessusClientData_v2><Report name="';
    const tail = '"></Report></NessusClientData_v2>\n';
    const chunk = Buffer.alloc(1024 * 1024, 'A');
    async function* body(): AsyncGenerator<Buffer> {
      yield Buffer.from(head);
      // The same 1 MiB buffer fifty times: the test holds one copy, not fifty.
      for (let i = 0; i < attributeBytes / chunk.length; i++) yield chunk;
      yield Buffer.from(tail);
    }
    const done = await expectFailsCleanly(Readable.from(body()), {
      message:
        /^An XML token \(tag, attribute value, text, comment or DOCTYPE\) is larger than the 8 MiB limit \(line 2, column \d+\)\.$/,
      line: 2,
      column: expect.any(Number),
    });
    expect(done.bytes).toBe(head.length + attributeBytes + tail.length);
  });
});

describe('binary garbage', () => {
  /** 1 MiB of random bytes behind a PNG signature: plainly binary, never XML, JSON or gzip. */
  const garbage = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]),
    randomBytes(1024 * 1024),
  ]);

  it('without format= it is refused at upload: 415 unsupported_format, no scan and no file', async () => {
    const before = await scanCount(t, workspaceId);
    const res = await upload(garbage, { 'content-type': 'application/octet-stream' });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual(
      problemDocument(
        415,
        'unsupported_format',
        'Unsupported scan format',
        'The scan format could not be recognised. Supported: Nessus v2, Qualys, OpenVAS/Greenbone, SARIF 2.1.0, CycloneDX, CLI findings JSON/JSON Lines; pass format= to force one.',
      ),
    );
    expect(await scanCount(t, workspaceId)).toBe(before);
    expect((await storedFiles(t, workspaceId)).filter((f) => f.includes('.part'))).toEqual([]);
  });

  it('with format=nessus it is accepted, and the scan fails saying the file is binary', async () => {
    const done = await expectFailsCleanly(
      garbage,
      { message: 'The file is binary data, not XML.', line: 1, column: 1 },
      '?format=nessus',
      { 'content-type': 'application/octet-stream' },
    );
    expect(done).toMatchObject({ format: 'nessus', bytes: garbage.length });
  });
});
