import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { detectFormat, parseScan } from '../../../../src/parsers/index.js';

/**
 * docs/ingestion.md#formats: a CLI JSON Lines file whose first line names the tool (`{"tool": …}`) was
 * refused with "Parser cannot parse input". Both CLI shapes are accepted; the tool line names
 * the scanner of every finding, and error positions still count real lines.
 */
const toolLine = JSON.stringify({ tool: { name: 'acme-scanner', version: '2.1.0' } });
const finding = (title: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ title, severity: 'HIGH', cveIds: ['CVE-2021-44228'], ...extra });

async function parse(text: string, format?: 'cli') {
  const out = [];
  for await (const batch of parseScan(Readable.from([Buffer.from(text)]), format ? { format } : {}))
    out.push(...batch);
  return out;
}

describe('CLI JSON Lines with a leading tool line', () => {
  const file = [toolLine, finding('Log4Shell'), finding('Spring4Shell', { cveIds: ['CVE-2022-22965'] })].join(
    '\n',
  );

  it('is detected as CLI findings', () => {
    expect(detectFormat(Buffer.from(file))).toBe('cli');
  });

  it.each([undefined, 'cli' as const])(
    'parses every finding under the tool name (format %s)',
    async (format) => {
      const findings = await parse(`${file}\n`, format);
      expect(findings.map((f) => [f.title, f.scanner])).toEqual([
        ['Log4Shell', 'acme-scanner'],
        ['Spring4Shell', 'acme-scanner'],
      ]);
    },
  );

  it('reports a broken finding at its real line (the tool line counts)', async () => {
    await expect(
      parse([toolLine, finding('ok'), JSON.stringify({ severity: 'LOW' })].join('\n')),
    ).rejects.toMatchObject({
      message: 'Finding 2 has no "title".',
      line: 3,
    });
  });

  it('still parses plain JSON Lines and the document form', async () => {
    expect((await parse([finding('a'), finding('b')].join('\n'))).map((f) => f.scanner)).toEqual([
      'CLI',
      'CLI',
    ]);
    const doc = JSON.stringify({ tool: { name: 'doc-tool' }, findings: [JSON.parse(finding('c'))] });
    expect((await parse(doc)).map((f) => [f.title, f.scanner])).toEqual([['c', 'doc-tool']]);
  });
});
