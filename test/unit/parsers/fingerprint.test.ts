import { describe, expect, it } from 'vitest';
import {
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
