import { describe, expect, it } from 'vitest';
import { assetLabel, findingRow } from '../../../src/domain/scans/finding-copy.js';
import type { Finding } from '../../../src/parsers/index.js';
import { parseFixture } from '../parsers/fixture-paths.js';

const finding = (rawExcerpt: string, evidence: string | null) =>
  ({ rawExcerpt, evidence, asset: {}, cveIds: [], aliases: [], cweIds: [] }) as unknown as Finding;
const scanOf = { id: 's', workspaceId: 'w' };
/** A findings row's last two cells: its evidence (m020), raw excerpt then scanner output. */
const evidenceCells = (row: string) => row.slice(0, -1).split('\t').slice(-2);

describe('COPY text rows of evidence, in the findings row', () => {
  it.each([
    ['plain text', 'abc', 'abc'],
    ['a backslash before an escaped character', 'a\\n\\\tb', 'a\\\\n\\\\\\tb'],
    ['tabs, newlines and carriage returns', 'a\tb\nc\r\nd', 'a\\tb\\nc\\r\\nd'],
    ['NUL, dropped', 'a\u0000b', 'ab'],
  ])('escapes %s', (_name, raw, encoded) => {
    const row = findingRow('f', scanOf, finding(raw, null));
    expect(row.endsWith('\n')).toBe(true);
    expect(evidenceCells(row)).toEqual([encoded, '\\N']);
  });

  it('bounds a long excerpt and marks it truncated', () => {
    const row = findingRow('f', scanOf, finding('x'.repeat(10_000), 'y'));
    expect(evidenceCells(row)).toEqual([`${'x'.repeat(4_000)}…[truncated]`, 'y']);
  });
});

describe("findings rows under the upload's asset (docs/ingestion.md#asset-context)", () => {
  const FINGERPRINT = 4;
  const ASSET = 19;
  const cells = (row: string) => row.slice(0, -1).split('\t');
  const scan = (uploadAsset: string | null) => ({ id: 's', workspaceId: 'w', uploadAsset });

  it.each(['scans/sarif/flawfinder.sarif', 'scans/cyclonedx/valid-vulnerability-1.4.json'])(
    'labels the hostless findings of %s with the upload asset and keys their fingerprint on it',
    async (fixture) => {
      // The parser fingerprints under the upload's asset; the row labels with the scan's.
      const parsed = async (uploadAsset: string | null) =>
        (await parseFixture(fixture, { uploadAsset })).findings;
      const [findings, underA, underB, underSpacedA] = await Promise.all([
        parsed(null),
        parsed('app-a'),
        parsed('app-b'),
        parsed(' app-a '),
      ]);
      expect(findings.length).toBeGreaterThan(0);
      findings.forEach((f, i) => {
        const plain = cells(findingRow('f', scan(null), f));
        const a = cells(findingRow('f', scan('app-a'), underA[i]!));
        const b = cells(findingRow('f', scan('app-b'), underB[i]!));
        expect(plain[FINGERPRINT]).toBe(f.fingerprint);
        expect(plain[ASSET]).toBe(assetLabel(f.asset) ?? '\\N');
        expect([a[ASSET], b[ASSET]]).toEqual(['app-a', 'app-b']);
        expect(a[FINGERPRINT]).toBe(underA[i]!.fingerprint);
        expect(new Set([plain[FINGERPRINT], a[FINGERPRINT], b[FINGERPRINT]]).size).toBe(3);
        // Re-attributing is stable: the same upload asset always gives the same case.
        expect(underSpacedA[i]!.fingerprint).toBe(a[FINGERPRINT]);
      });
      // Distinct cases within one upload stay distinct under an upload asset.
      const distinct = new Set(findings.map((f) => f.fingerprint)).size;
      expect(new Set(underA.map((f) => f.fingerprint)).size).toBe(distinct);
    },
  );

  it('keeps the own host of network findings as their asset and fingerprint', async () => {
    const { findings } = await parseFixture('scans/nessus/nessus_v_unknown.xml');
    const underDc1 = (await parseFixture('scans/nessus/nessus_v_unknown.xml', { uploadAsset: 'dc1' }))
      .findings;
    expect(underDc1).toHaveLength(findings.length);
    findings.forEach((f, i) => {
      const row = cells(findingRow('f', scan('dc1'), underDc1[i]!));
      expect(row[FINGERPRINT]).toBe(f.fingerprint);
      expect(row[ASSET]).toBe(assetLabel(f.asset));
      expect(row[ASSET]).not.toBe('dc1');
    });
  });
});
