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
