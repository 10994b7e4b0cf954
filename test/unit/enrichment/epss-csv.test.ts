import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { EpssCsvToCopy, parseEpssComment, parseEpssRow } from '../../../src/domain/enrichment/epss-csv.js';

async function convert(chunks: Array<string | Buffer>): Promise<{ out: string; csv: EpssCsvToCopy }> {
  const csv = new EpssCsvToCopy();
  let out = '';
  await pipeline(
    Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))),
    csv,
    new Writable({
      write(chunk: Buffer, _enc, done) {
        out += chunk.toString();
        done();
      },
    }),
  );
  return { out, csv };
}

describe('parseEpssComment', () => {
  it.each([
    [
      '#model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z',
      { modelVersion: 'v2026.06.15', scoreDate: '2026-09-29' },
    ],
    [
      '#score_date:2025-03-15T00:00:00+0000,model_version:v2025.03.14',
      { modelVersion: 'v2025.03.14', scoreDate: '2025-03-15' },
    ],
    ['#model_version:v1', { modelVersion: 'v1', scoreDate: null }],
    ['#something else', { modelVersion: null, scoreDate: null }],
  ])('reads %s', (line, meta) => {
    expect(parseEpssComment(line)).toEqual(meta);
  });

  it('rejects an impossible score_date', () => {
    expect(() => parseEpssComment('#model_version:v1,score_date:2026-02-30T00:00:00Z')).toThrow(
      'line 1: score_date "2026-02-30T00:00:00Z" is not a date',
    );
  });
});

describe('parseEpssRow', () => {
  it.each([
    ['CVE-2021-44228,0.94358,0.99989', { cveId: 'CVE-2021-44228', epss: '0.94358', percentile: '0.99989' }],
    ['cve-2024-123456,0,1', { cveId: 'CVE-2024-123456', epss: '0', percentile: '1' }],
    ['CVE-2024-0001, 1.0e-05 ,.5', { cveId: 'CVE-2024-0001', epss: '1.0e-05', percentile: '.5' }],
  ])('accepts %s', (line, row) => {
    expect(parseEpssRow(line, 3)).toEqual(row);
  });

  it.each([
    ['CVE-2021-44228,0.9', 'line 7: expected 3 fields (cve,epss,percentile), got 2'],
    ['CVE-2021-44228,0.9,0.9,x', 'line 7: expected 3 fields (cve,epss,percentile), got 4'],
    ['GHSA-xxxx,0.1,0.1', 'line 7: "GHSA-xxxx" is not a CVE id'],
    ['CVE-2021-44228,abc,0.5', 'line 7: epss "abc" is not a number in [0, 1]'],
    ['CVE-2021-44228,-0.1,0.5', 'line 7: epss "-0.1" is not a number in [0, 1]'],
    ['CVE-2021-44228,0.1,1.01', 'line 7: percentile "1.01" is not a number in [0, 1]'],
    ['CVE-2021-44228,0.1,', 'line 7: percentile "" is not a number in [0, 1]'],
    ['CVE-2021-44228,NaN,0.1', 'line 7: epss "NaN" is not a number in [0, 1]'],
    ['CVE-2021-44228,0x1,0.1', 'line 7: epss "0x1" is not a number in [0, 1]'],
  ])('rejects %s', (line, message) => {
    expect(() => parseEpssRow(line, 7)).toThrow(message);
  });
});

describe('EpssCsvToCopy', () => {
  const FILE =
    '#model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z\n' +
    'cve,epss,percentile\n' +
    'CVE-1999-0001,0.03351,0.88255\n' +
    'cve-1999-0002,0.27858,0.98037\n';
  const COPY = 'CVE-1999-0001\t0.03351\t0.88255\nCVE-1999-0002\t0.27858\t0.98037\n';

  it('turns rows into COPY text and keeps the comment metadata', async () => {
    const { out, csv } = await convert([FILE]);
    expect(out).toBe(COPY);
    expect(csv.rows).toBe(2);
    expect(csv.meta).toEqual({ modelVersion: 'v2026.06.15', scoreDate: '2026-09-29' });
  });

  it('gives the same result whatever the chunk boundaries', async () => {
    const bytes = Buffer.from(FILE);
    const oneByOne = [...bytes].map((b) => Buffer.from([b]));
    expect((await convert(oneByOne)).out).toBe(COPY);
    expect((await convert([bytes.subarray(0, 70), bytes.subarray(70)])).out).toBe(COPY);
  });

  it('accepts CRLF line ends, a BOM, no trailing newline and no comment line', async () => {
    const { out, csv } = await convert([
      '\ufeffcve,epss,percentile\r\nCVE-1999-0001,0.03351,0.88255\r\nCVE-1999-0002,0.5,0.5',
    ]);
    expect(out).toBe('CVE-1999-0001\t0.03351\t0.88255\nCVE-1999-0002\t0.5\t0.5\n');
    expect(csv.meta).toEqual({ modelVersion: null, scoreDate: null });
  });

  it('keeps a multi-byte character split across chunks intact in error messages', async () => {
    const bytes = Buffer.from('cve,epss,percentile\nCVE-1999-0001,0.1,0.1\nCVE-é,0.1,0.1\n');
    const split = bytes.indexOf(0xc3) + 1;
    await expect(convert([bytes.subarray(0, split), bytes.subarray(split)])).rejects.toThrow(
      'line 3: "CVE-é" is not a CVE id',
    );
  });

  it.each([
    ['', 'no "cve,epss,percentile" header: not an EPSS file'],
    ['cve,epss,percentile\n', 'the file has no scores'],
    [
      'cve,score,percentile\nCVE-1999-0001,0.1,0.1\n',
      'line 1: expected the header "cve,epss,percentile", got "cve,score,percentile"',
    ],
    [
      '{"catalogVersion": "1"}',
      'line 1: expected the header "cve,epss,percentile", got "{\\"catalogVersion\\": \\"1\\"}"',
    ],
  ])('rejects %j', async (text, message) => {
    await expect(convert([text])).rejects.toMatchObject({ code: 'malformed_input', message });
  });

  it('rejects a line longer than 64 KiB instead of buffering it', async () => {
    await expect(convert(['cve,epss,percentile\n', 'x'.repeat(70_000)])).rejects.toThrow(
      /longer than 64 KiB/,
    );
  });
});
