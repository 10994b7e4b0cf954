import { describe, expect, it } from 'vitest';
import { SpillRowDecoder, encodeSpillRow, type SpillRow } from '../../../../src/parsers/qualys/spill.js';

const rows: SpillRow[] = [
  {
    qid: '38601',
    type: 'Vuln',
    port: '3389',
    protocol: 'tcp',
    result: '12:~:\n\r\tcafé 😀 "quoted" \\ ',
    ip: '10.0.0.1',
    dns: null,
    netbios: '',
    os: 'Windows 2008 R2 / 7',
    excerpt: '<VULN_INFO>\n  <QID id="qid_38601">38601</QID>\n</VULN_INFO>',
  },
  {
    qid: null,
    type: '',
    port: null,
    protocol: null,
    result: null,
    ip: null,
    dns: 'a.example',
    netbios: null,
    os: null,
    excerpt: '',
  },
];

describe('Qualys join spill rows', () => {
  it.each([1, 2, 5, 1000])('round-trip any text when read back in chunks of %i characters', (size) => {
    const text = rows.map(encodeSpillRow).join('').repeat(3);
    const decoder = new SpillRowDecoder();
    const out: SpillRow[] = [];
    for (let i = 0; i < text.length; i += size) out.push(...decoder.push(text.slice(i, i + size)));
    decoder.end();
    expect(out).toEqual([...rows, ...rows, ...rows]);
  });

  it('refuses a file that ends inside a row', () => {
    const decoder = new SpillRowDecoder();
    decoder.push(encodeSpillRow(rows[0]!).slice(0, -3));
    expect(() => decoder.end()).toThrow(/ends inside a row/);
  });
});
