import { describe, expect, it } from 'vitest';
import {
  attributedAsset,
  canonicalFingerprintString,
  fingerprintFinding,
  type FingerprintInput,
} from '../../../src/parsers/index.js';
import { parseFixture } from './fixture-paths.js';

const asset = {
  host: null,
  ip: null,
  fqdn: null,
  os: null,
  component: null,
  componentVersion: null,
  purl: null,
  file: null,
  line: null,
};
const base: FingerprintInput = {
  scanner: 'Nessus',
  ruleId: '18405',
  cveIds: ['CVE-2005-1794'],
  title: 'RDP MitM',
  asset: { ...asset, host: 'qa3app09', ip: '10.31.112.29', fqdn: 'qa3app09' },
  port: 3389,
  protocol: 'tcp',
  producerFingerprints: null,
};

describe('fingerprintFinding', () => {
  it('is a pinned SHA-256 of the canonical string (changing the recipe must be deliberate)', () => {
    expect(canonicalFingerprintString(base)).toBe(
      '["fp1","rule:nessus:18405","ip:10.31.112.29","port:3389/tcp"]',
    );
    // Pinned value computed outside the code under test: sha256 of the canonical string above.
    expect(fingerprintFinding(base)).toBe('e34932636dca445efb586b45c81255598a550c91d9494395feccc990353e0448');
  });

  it.each([
    ['title and description wording', { title: 'other words' }, true],
    ['hostname casing', { asset: { ...base.asset, fqdn: 'QA3APP09' } }, true],
    ['CVE order without a rule id', { ruleId: null, cveIds: ['CVE-2', 'CVE-1'] }, null],
    ['a different port', { port: 443 }, false],
    ['a different host ip', { asset: { ...base.asset, ip: '10.31.112.30' } }, false],
    ['a different plugin', { ruleId: '18406' }, false],
    ['the same plugin id from another scanner', { scanner: 'Qualys' }, false],
  ] as const)('%s', (_name, change, same) => {
    const changed = { ...base, ...change } as FingerprintInput;
    if (same === null) {
      const reordered = { ...changed, cveIds: ['CVE-1', 'CVE-2'] };
      expect(fingerprintFinding(changed)).toBe(fingerprintFinding(reordered));
    } else if (same) {
      expect(fingerprintFinding(changed)).toBe(fingerprintFinding(base));
    } else {
      expect(fingerprintFinding(changed)).not.toBe(fingerprintFinding(base));
    }
  });

  it('uses SARIF fingerprints instead of the line, so moved code keeps its case', () => {
    const sarif: FingerprintInput = {
      ...base,
      scanner: 'CodeQL',
      ruleId: 'js/sql-injection',
      port: null,
      protocol: null,
      asset: { ...asset, file: 'src/db.js', line: 17 },
      producerFingerprints: { primaryLocationLineHash: 'abc:1' },
    };
    expect(fingerprintFinding({ ...sarif, asset: { ...sarif.asset, line: 40 } })).toBe(
      fingerprintFinding(sarif),
    );
    const noFp = { ...sarif, producerFingerprints: null };
    expect(fingerprintFinding({ ...noFp, asset: { ...noFp.asset, line: 40 } })).not.toBe(
      fingerprintFinding(noFp),
    );
  });

  it('gives the same CVE on the same host from two scanners one case when neither has a rule id', () => {
    const a = { ...base, ruleId: null, scanner: 'CLI' };
    const b = { ...base, ruleId: null, scanner: 'other-tool', title: 'different' };
    expect(fingerprintFinding(a)).toBe(fingerprintFinding(b));
  });
});

describe("the upload's asset (asset= of the upload) in the fingerprint", () => {
  const sarif: FingerprintInput = {
    scanner: 'CodeQL',
    ruleId: 'js/sql-injection',
    cveIds: [],
    title: 'SQL injection',
    asset: { ...asset, file: 'src/db.js', line: 17 },
    port: null,
    protocol: null,
    producerFingerprints: null,
  };
  const sca: FingerprintInput = {
    ...sarif,
    scanner: 'CycloneDX',
    ruleId: 'CVE-2021-44228',
    cveIds: ['CVE-2021-44228'],
    asset: {
      ...asset,
      component: 'log4j-core',
      componentVersion: '2.14.1',
      purl: 'pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1',
    },
  };
  const cliWithoutAsset: FingerprintInput = {
    ...sarif,
    scanner: 'tool',
    ruleId: null,
    cveIds: ['CVE-2024-1'],
    asset,
  };

  it('leaves the canonical string of every finding unchanged when the upload names no asset', () => {
    for (const input of [base, sarif, sca, cliWithoutAsset]) {
      const before = canonicalFingerprintString(input);
      for (const uploadAsset of [undefined, null, '', '   ']) {
        expect(canonicalFingerprintString({ ...input, uploadAsset })).toBe(before);
      }
    }
    expect(canonicalFingerprintString(sarif)).toBe(
      '["fp1","rule:codeql:js/sql-injection","file:src/db.js","line:17"]',
    );
  });

  it.each([
    ['a SARIF result (file path)', sarif, 'upload:"app-a"/file:src/db.js'],
    [
      'a CycloneDX vulnerability (package URL)',
      sca,
      'upload:"app-a"/purl:pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1',
    ],
    ['a CLI finding without asset', cliWithoutAsset, 'upload:"app-a"/none'],
  ] as const)('puts the upload asset into the asset part of %s', (_name, input, assetPart) => {
    const parts = JSON.parse(canonicalFingerprintString({ ...input, uploadAsset: 'app-a' })) as string[];
    expect(parts[2]).toBe(assetPart);
    expect(fingerprintFinding({ ...input, uploadAsset: 'app-a' })).not.toBe(fingerprintFinding(input));
    expect(fingerprintFinding({ ...input, uploadAsset: 'app-a' })).not.toBe(
      fingerprintFinding({ ...input, uploadAsset: 'app-b' }),
    );
    expect(fingerprintFinding({ ...input, uploadAsset: ' app-a ' })).toBe(
      fingerprintFinding({ ...input, uploadAsset: 'app-a' }),
    );
    expect(fingerprintFinding({ ...input, uploadAsset: 'App-A' })).not.toBe(
      fingerprintFinding({ ...input, uploadAsset: 'app-a' }),
    );
  });

  it.each([
    ['an ip', { ip: '10.0.0.5' }],
    ['an FQDN', { fqdn: 'db1.example.com' }],
    ['a hostname', { host: 'db1' }],
    ['a hostname beside a file', { host: 'db1', file: 'src/db.js' }],
  ])('ignores the upload asset for a finding with %s of its own', (_name, own) => {
    const input = { ...sarif, asset: { ...asset, ...own } };
    expect(attributedAsset(input.asset, 'app-a')).toBeNull();
    expect(fingerprintFinding({ ...input, uploadAsset: 'app-a' })).toBe(fingerprintFinding(input));
  });

  it('quotes the upload asset, so no name can pose as another asset and file', () => {
    const a = { ...sarif, asset: { ...asset, file: 'x/file:y' }, uploadAsset: 'app' };
    const b = { ...sarif, asset: { ...asset, file: 'y' }, uploadAsset: 'app/file:x' };
    expect(fingerprintFinding(a)).not.toBe(fingerprintFinding(b));
  });
});

describe('fingerprints and record indices of parsed files', () => {
  it('are identical across re-parses, and differ between the seven hosts of one plugin', async () => {
    const first = await parseFixture('scans/nessus/nessus_v_unknown.xml');
    const second = await parseFixture('scans/nessus/nessus_v_unknown.xml', { batchSize: 7 });
    expect(second.findings.map((f) => [f.recordIndex, f.fingerprint])).toEqual(
      first.findings.map((f) => [f.recordIndex, f.fingerprint]),
    );
    const rdp = first.findings.filter((f) => f.ruleId === '18405');
    expect(rdp).toHaveLength(7);
    expect(new Set(rdp.map((f) => f.fingerprint)).size).toBe(7);
  });
});
