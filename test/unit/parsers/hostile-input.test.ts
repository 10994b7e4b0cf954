import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ParseError,
  parseScanToArray,
  type ParseScanOptions,
  type ScanFormat,
} from '../../../src/parsers/index.js';
import { fixturePath } from './fixture-paths.js';

/** Parses and returns the error; fails the test if parsing succeeds. */
async function parseError(
  input: string | Buffer | Readable,
  options: ParseScanOptions = {},
): Promise<ParseError> {
  const source =
    input instanceof Readable
      ? input
      : Readable.from([typeof input === 'string' ? Buffer.from(input) : input]);
  try {
    await parseScanToArray(source, options);
  } catch (err) {
    expect(err).toBeInstanceOf(ParseError);
    return err as ParseError;
  }
  throw new Error('expected a ParseError');
}

const NESSUS = { format: 'nessus' as ScanFormat };

let server: Server;
let requests = 0;
let dtdUrl = '';

beforeAll(async () => {
  server = createServer((_req, res) => {
    requests++;
    res.end('<!ENTITY remote "pwned">');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  dtdUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/evil.dtd`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('hostile XML is refused with a clear ParseError', () => {
  it.each([
    [
      'external entity',
      '<?xml version="1.0"?><!DOCTYPE NessusClientData_v2 [<!ENTITY x SYSTEM "file:///etc/passwd">]><NessusClientData_v2>&x;</NessusClientData_v2>',
    ],
    [
      'billion laughs',
      `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`).join('')}]><NessusClientData_v2>&lol9;</NessusClientData_v2>`,
    ],
  ])('%s: entity declarations are rejected', async (_name, xml) => {
    const err = await parseError(xml, NESSUS);
    expect(err.code).toBe('unparseable_scan');
    expect(err.message).toMatch(
      /^The DOCTYPE declares entities \(<!ENTITY>\); entity declarations are refused/,
    );
    expect(err.line).toBe(1);
  });

  it('never fetches a remote DTD and treats its entities as undefined', async () => {
    const ok = await parseScanToArray(
      Readable.from([
        Buffer.from(
          `<?xml version="1.0"?><!DOCTYPE NessusClientData_v2 SYSTEM "${dtdUrl}"><NessusClientData_v2/>`,
        ),
      ]),
      NESSUS,
    );
    expect(ok.findings).toEqual([]);
    const err = await parseError(
      `<!DOCTYPE NessusClientData_v2 SYSTEM "${dtdUrl}"><NessusClientData_v2>&remote;</NessusClientData_v2>`,
      NESSUS,
    );
    expect(err.message).toMatch(/undefined entity.*never expanded/);
    expect(requests).toBe(0);
  });

  it('stops at the nesting limit on 100,000-deep nesting', async () => {
    const deep = `<NessusClientData_v2>${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}</NessusClientData_v2>`;
    const err = await parseError(deep, NESSUS);
    expect(err.message).toMatch(
      /^XML nesting is deeper than the limit of 256 elements \(line 1, column \d+\)\.$/,
    );
  });

  it('stops a 50 MB attribute after reading about the 8 MiB limit, without buffering it', async () => {
    let produced = 0;
    const piece = Buffer.alloc(64 * 1024, 'A');
    const source = Readable.from(
      (function* () {
        yield Buffer.from('<NessusClientData_v2><Report name="');
        while (produced < 50 * 1024 * 1024) {
          produced += piece.length;
          yield piece;
        }
        yield Buffer.from('"/></NessusClientData_v2>');
      })(),
    );
    const err = await parseError(source, NESSUS);
    expect(err.message).toMatch(
      /^An XML token \(tag, attribute value, text, comment or DOCTYPE\) is larger than the 8 MiB limit/,
    );
    expect(produced).toBeLessThan(10 * 1024 * 1024);
  });

  it('bounds a text node by the configured limit', async () => {
    const xml = `<NessusClientData_v2><Report><ReportHost name="h"><ReportItem pluginID="1" severity="1"><description>${'x'.repeat(300_000)}</description></ReportItem></ReportHost></Report></NessusClientData_v2>`;
    const err = await parseError(xml, { ...NESSUS, limits: { maxTextBytes: 100_000 } });
    expect(err.message).toMatch(/larger than the 97\.7 KiB limit/);
  });

  it('reports a truncated file with line and column', async () => {
    const full = readFileSync(fixturePath('scans/nessus/nessus_v_unknown.xml'));
    const err = await parseError(full.subarray(0, Math.floor(full.length * 0.6)), {});
    expect(err.code).toBe('unparseable_scan');
    expect(err.message).toMatch(
      /^The XML ends inside <\w+> \(truncated file\?\) \(line \d+, column \d+\)\.$/,
    );
    expect(err.line).toBeGreaterThan(1000);
    expect(err.column).not.toBeNull();
  });

  it.each([
    [
      'binary garbage',
      Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0xff, 0xfe]),
      'The file is binary data, not XML.',
    ],
    ['JSON sent as XML', Buffer.from('{"runs": []}'), 'The file is JSON, not XML.'],
    ['plain text', Buffer.from('hello world'), 'The file does not start with an XML element or declaration.'],
    ['empty file', Buffer.alloc(0), 'The file contains no XML root element (empty or not XML).'],
  ])('%s with format=nessus', async (_name, bytes, message) => {
    const err = await parseError(bytes, NESSUS);
    expect({ code: err.code, message: err.message }).toEqual({ code: 'unparseable_scan', message });
  });

  it('rejects the wrong root element for a forced format', async () => {
    const err = await parseError('<report><results/></report>', NESSUS);
    expect(err.message).toBe(
      'Expected root element <NessusClientData_v2> but found <report> (line 1, column 9).',
    );
  });

  it('rejects an unrecognised file as unsupported_format', async () => {
    const err = await parseError('<html><body>hi</body></html>');
    expect(err.code).toBe('unsupported_format');
  });

  it('crosses the thread boundary as a plain object', async () => {
    const err = await parseError('<NessusClientData_v2><a>', NESSUS);
    expect(structuredClone(err.toObject())).toEqual({
      name: 'ParseError',
      code: 'unparseable_scan',
      message: err.message,
      line: err.line,
      column: err.column,
    });
  });
});

describe('hostile JSON is refused with a clear ParseError', () => {
  it.each([
    [
      'truncated SARIF',
      '{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"ruleId":"a"',
      'sarif',
      /^The JSON document ends before it is complete/,
    ],
    ['invalid JSON', '{"runs": [}', 'sarif', /^Invalid JSON near line 1/],
    ['XML sent as JSON', '<bom/>', 'sarif', /^The file is XML, not JSON\.$/],
    [
      'CLI finding without title',
      '{"tool":{"name":"t"},"findings":[{"severity":"high"}]}',
      'cli',
      /^Finding 1 has no "title"\.$/,
    ],
  ])('%s', async (_name, text, format, message) => {
    const err = await parseError(text, { format: format as ScanFormat });
    expect(err.code).toBe('unparseable_scan');
    expect(err.message).toMatch(message);
  });

  it.each([
    ['outside a selected record', `{"runs":${'['.repeat(100_000)}`],
    ['inside a selected record', `{"runs":[{"results":[${'['.repeat(100_000)}`],
  ])('stops at the nesting limit on 100,000-deep JSON %s', async (_name, text) => {
    const err = await parseError(text, { format: 'sarif' });
    expect(err.message).toBe('JSON nesting is deeper than the limit of 256 levels.');
  });

  it('bounds one JSON string by the text limit', async () => {
    const err = await parseError(`{"runs":[{"results":[{"message":{"text":"${'y'.repeat(200_000)}"}}]}]}`, {
      format: 'sarif',
      limits: { maxTextBytes: 50_000 },
    });
    expect(err.message).toMatch(/^A JSON string near line 1 exceeds the 48\.8 KiB size limit\.$/);
  });
});
