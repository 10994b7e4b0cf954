import { createReadStream, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { EXCERPT_TRUNCATION_MARKER, parseScan, parseScanToArray } from '../../../src/parsers/index.js';
import { fixturePath } from './fixture-paths.js';

const ITEM = (i: number) =>
  `<ReportItem port="${1 + (i % 60000)}" protocol="tcp" severity="${i % 5}" pluginID="${10000 + i}" pluginName="Check ${i}"><description>${'d'.repeat(400)}</description><cve>CVE-2020-${1000 + (i % 9000)}</cve></ReportItem>`;

/** A synthetic Nessus stream of `items` ReportItems that records how many bytes were pulled. */
function nessusStream(items: number, counter: { bytes: number; closed: boolean }): Readable {
  return Readable.from(
    (function* () {
      try {
        const head = Buffer.from(
          '<NessusClientData_v2><Report name="r"><ReportHost name="10.0.0.1"><HostProperties><tag name="host-ip">10.0.0.1</tag></HostProperties>',
        );
        counter.bytes += head.length;
        yield head;
        for (let i = 0; i < items; i += 50) {
          const chunk = Buffer.from(
            Array.from({ length: Math.min(50, items - i) }, (_, k) => ITEM(i + k)).join(''),
          );
          counter.bytes += chunk.length;
          yield chunk;
        }
        yield Buffer.from('</ReportHost></Report></NessusClientData_v2>');
      } finally {
        counter.closed = true;
      }
    })(),
    { objectMode: false, highWaterMark: 16 * 1024 },
  );
}

describe('streaming behaviour', () => {
  it('does not read ahead while the consumer is slow (backpressure)', async () => {
    const counter = { bytes: 0, closed: false };
    const parse = parseScan(nessusStream(40_000, counter), { batchSize: 500 });
    const it = parse[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.value).toHaveLength(500);
    const afterFirst = counter.bytes;
    await new Promise((r) => setTimeout(r, 100));
    const settled = counter.bytes;
    await new Promise((r) => setTimeout(r, 200));
    // While the consumer sits on the batch, only the Readable's own buffer refills (one source
    // chunk of ~27 KB over its 16 KiB highWaterMark), then reading stops.
    expect(settled - afterFirst).toBeLessThan(64 * 1024);
    expect(counter.bytes).toBe(settled);
    // ~20 MB in total; only about one batch worth (~0.3 MB) plus stream buffers was read.
    expect(afterFirst).toBeLessThan(2 * 1024 * 1024);
    await it.return?.();
    expect(counter.closed).toBe(true);
  });

  it('yields full batches of the requested size and a final remainder', async () => {
    const counter = { bytes: 0, closed: false };
    const sizes: number[] = [];
    const parse = parseScan(nessusStream(1234, counter), { batchSize: 500 });
    for await (const batch of parse) sizes.push(batch.length);
    expect(sizes).toEqual([500, 500, 234]);
    expect(parse.result).toMatchObject({
      format: 'nessus',
      count: 1234,
      bytes: counter.bytes + 44,
      notes: [],
    });
  });

  it('gunzips a gzip upload automatically and when asked', async () => {
    const plain = readFileSync(fixturePath('scans/openvas/many_vuln.xml'));
    const gz = gzipSync(plain);
    const auto = await parseScanToArray(Readable.from([gz]));
    const forced = await parseScanToArray(Readable.from([gz]), { gzip: true, format: 'openvas' });
    expect(auto.findings).toHaveLength(44);
    expect(forced.findings.map((f) => f.fingerprint)).toEqual(auto.findings.map((f) => f.fingerprint));
    await expect(
      parseScanToArray(Readable.from([gz.subarray(0, gz.length - 200)]), { format: 'openvas' }),
    ).rejects.toMatchObject({
      name: 'ParseError',
      code: 'unparseable_scan',
    });
  });

  it('gives the same findings for every chunking of the input', async () => {
    const bytes = readFileSync(fixturePath('scans/sarif/flawfinder.sarif'));
    const whole = await parseScanToArray(Readable.from([bytes]));
    const split: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 7) split.push(bytes.subarray(i, i + 7));
    const tiny = await parseScanToArray(Readable.from(split));
    expect(tiny.findings).toEqual(whole.findings);
  });

  it('removes the Qualys join spill file after success and after failure', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qualys-spill-'));
    try {
      const ok = await parseScanToArray(
        Readable.from([readFileSync(fixturePath('scans/qualys/Qualys_Sample_Report.xml'))]),
        { tmpDir: dir },
      );
      expect(ok.findings).toHaveLength(301);
      const full = readFileSync(fixturePath('scans/qualys/Qualys_Sample_Report.xml'));
      await expect(
        parseScanToArray(Readable.from([full.subarray(0, full.length - 5000)]), { tmpDir: dir }),
      ).rejects.toMatchObject({ code: 'unparseable_scan' });
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    'scans/nessus/nessus_v_unknown.xml',
    'scans/sarif/bash-report.sarif',
    'scans/cyclonedx/log4j.xml',
  ])('bounds raw excerpts of %s and marks the cut', async (file) => {
    const { findings } = await parseScanToArray(Readable.from([readFileSync(fixturePath(file))]), {
      limits: { maxExcerptBytes: 300 },
    });
    expect(findings.length).toBeGreaterThan(0);
    for (const f of findings) {
      expect(Buffer.byteLength(f.rawExcerpt)).toBeLessThanOrEqual(300);
      if (Buffer.byteLength(f.rawExcerpt) > 280)
        expect(f.rawExcerpt.endsWith(EXCERPT_TRUNCATION_MARKER)).toBe(true);
    }
    expect(findings.some((f) => f.rawExcerpt.endsWith(EXCERPT_TRUNCATION_MARKER))).toBe(true);
  });

  it('lets I/O errors of the source through unchanged instead of calling the scan broken', async () => {
    const err = await parseScanToArray(createReadStream('/nonexistent/scan.nessus')).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ENOENT' });
    expect((err as Error).name).not.toBe('ParseError');
  });

  it('parses identically with the sax engine', async () => {
    const bytes = readFileSync(fixturePath('scans/nessus/nessus_v_unknown.xml'));
    const a = await parseScanToArray(Readable.from([bytes]), { xmlEngine: 'saxes' });
    const b = await parseScanToArray(Readable.from([bytes]), { xmlEngine: 'sax' });
    expect(b.findings).toEqual(a.findings);
  });

  it.each(['saxes', 'sax'] as const)(
    'copies raw excerpts verbatim whatever the chunk boundaries (%s)',
    async (xmlEngine) => {
      const item =
        '<ReportItem port="443" protocol="tcp" severity="2" pluginID="1" pluginName="Ünïcode &amp; co">\n' +
        '  <description>caf\u00e9 \u{1F600} &lt;b&gt;</description>\r\n  <cve>CVE-2020-1234</cve>\n</ReportItem>';
      const doc = Buffer.from(
        `<?xml version="1.0"?>\n<NessusClientData_v2><Report name="r"><ReportHost name="10.0.0.1">${item}${item}</ReportHost></Report></NessusClientData_v2>`,
      );
      for (const size of [1, 2, 3, 7, 64, doc.length]) {
        const chunks: Buffer[] = [];
        for (let i = 0; i < doc.length; i += size) chunks.push(doc.subarray(i, i + size));
        const { findings } = await parseScanToArray(Readable.from(chunks), { xmlEngine });
        // The tokenizer normalises CR LF to LF in text, never in the excerpt.
        expect(findings.map((f) => f.rawExcerpt)).toEqual([item, item]);
      }
    },
  );
});
