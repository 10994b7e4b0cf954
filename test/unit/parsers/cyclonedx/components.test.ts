import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ComponentIndex, MAX_INDEXED_COMPONENTS } from '../../../../src/parsers/cyclonedx/common.js';
import { parseScan, type Finding } from '../../../../src/parsers/index.js';

const comp = (name: string) => ({ name, group: null, version: '1.0', purl: `pkg:npm/${name}@1.0` });

describe('the CycloneDX component index is bounded', () => {
  it('indexes up to its bound by bom-ref and purl, then counts without keeping', () => {
    const index = new ComponentIndex(2);
    index.add('a', comp('a'));
    index.add('b', comp('b'));
    expect(index.boundNote()).toBeNull();
    index.add('c', comp('c'));
    expect(index.get('a')).toEqual(comp('a'));
    expect(index.get('pkg:npm/b@1.0')).toEqual(comp('b'));
    expect(index.get('c')).toBeUndefined();
    expect(index).toMatchObject({ count: 3, dropped: 1 });
    expect(index.boundNote()).toBe(
      'BOM has 3 components; past the first 2, findings name a component by its bom-ref only',
    );
  });

  it('keeps the strings JSON.parse made as they are, without copying them', () => {
    const index = new ComponentIndex(2, { copyStrings: false });
    const a = comp('a');
    index.add('a', a);
    expect(index.get('a')).toBe(a);
    expect(index.get('pkg:npm/a@1.0')).toBe(a);
  });

  it('answers a bom-ref before a purl, the last bom-ref and the first purl, however lookups interleave', () => {
    const index = new ComponentIndex(10, { copyStrings: false });
    const a = comp('a');
    const b = comp('b');
    const a2 = { ...comp('a2'), purl: a.purl };
    index.add('x', a);
    index.add(null, a2); // a second component with a's purl: a stays the purl's answer
    index.add(a.purl, b); // a bom-ref equal to a's purl wins over it
    expect(index.get(a.purl)).toBe(b);
    expect(index.get('x')).toBe(a);
    const c = comp('c');
    const c2 = { ...comp('c2'), purl: c.purl };
    expect(index.get(c.purl)).toBeUndefined(); // the purl map exists from here on
    index.add(null, c);
    index.add('y', c2);
    expect(index.get(c.purl)).toBe(c);
    index.add(c.purl, a2);
    expect(index.get(c.purl)).toBe(a2);
    expect(index.get('nothing')).toBeUndefined();
  });

  it('reads a component as JSON.parse would: escaped keys, duplicate keys, numbers, nested', async () => {
    const bom = JSON.stringify({
      bomFormat: 'CycloneDX',
      specVersion: '1.5',
      components: [],
      vulnerabilities: ['a', 'b', 'c', 'pkg:npm/d@4', 'e'].map((ref, i) => ({
        id: `CVE-2025-000${i + 1}`,
        affects: [{ ref }],
      })),
    }).replace(
      '"components":[]',
      `"components":[
        {"bom-ref":"a","name":"plain","n\\u0061me":"\\u00e9scaped","version":"1"},
        {"bom-ref":"b","name":"first","name":"second","version":1.50},
        {"bom-ref":"c","name":{"x":1},"purl":"pkg:npm/c@3","version":"3"},
        {"bom-ref":"p","name":"parent","components":[{"bom-ref":"e","name":"nested \ud83d\ude00","version":"5"}]},
        {"name":"by purl","version":"4","purl":"pkg:npm/d@4","licenses":[{"license":{"id":"MIT"}}]}
      ]`,
    );
    const findings: Finding[] = [];
    for await (const batch of parseScan(Readable.from([Buffer.from(bom)]))) findings.push(...batch);
    expect(findings.map((f) => [f.title, f.asset.component, f.asset.componentVersion, f.asset.purl])).toEqual(
      [
        ['CVE-2025-0001 in \u00e9scaped@1', '\u00e9scaped', '1', null],
        ['CVE-2025-0002 in second@1.5', 'second', '1.5', null],
        ['CVE-2025-0003 in pkg:npm/c@3@3', 'pkg:npm/c@3', '3', 'pkg:npm/c@3'],
        ['CVE-2025-0004 in by purl@4', 'by purl', '4', 'pkg:npm/d@4'],
        ['CVE-2025-0005 in nested \u{1f600}@5', 'nested \u{1f600}', '5', null],
      ],
    );
  });

  it('a BOM past the bound still yields every finding, and says what it did', async () => {
    const total = MAX_INDEXED_COMPONENTS + 1;
    const last = `pkg:npm/c${total}@1.0`;
    async function* bom() {
      yield Buffer.from('{"bomFormat":"CycloneDX","specVersion":"1.5","components":[');
      for (let i = 1; i <= total; i += 10_000) {
        const part: string[] = [];
        for (let j = i; j < Math.min(i + 10_000, total + 1); j++)
          part.push(
            `{"bom-ref":"pkg:npm/c${j}@1.0","name":"c${j}","version":"1.0","purl":"pkg:npm/c${j}@1.0"}`,
          );
        yield Buffer.from((i > 1 ? ',' : '') + part.join(','));
      }
      yield Buffer.from(
        `],"vulnerabilities":[{"id":"CVE-2025-1","affects":[{"ref":"pkg:npm/c1@1.0"},{"ref":"${last}"}]}]}`,
      );
    }
    const findings: Finding[] = [];
    const run = parseScan(Readable.from(bom()));
    for await (const batch of run) findings.push(...batch);
    expect(findings.map((f) => [f.asset.component, f.asset.purl])).toEqual([
      ['c1', 'pkg:npm/c1@1.0'],
      [last, last], // not indexed: named by its ref, which is a purl
    ]);
    expect(run.result?.notes).toEqual([
      `BOM has ${total} components; past the first ${MAX_INDEXED_COMPONENTS}, findings name a component by its bom-ref only`,
    ]);
  }, 60_000);
});
