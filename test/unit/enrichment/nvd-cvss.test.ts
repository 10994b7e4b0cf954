import { describe, expect, it } from 'vitest';
import { chooseCvss, parseNvdVulnerability } from '../../../src/domain/enrichment/nvd-cvss.js';

const m = (type: string, baseScore: unknown, source = 'nvd@nist.gov', vectorString: unknown = 'V') => ({
  source,
  type,
  cvssData: { baseScore, vectorString },
});

describe('chooseCvss', () => {
  it.each([
    [
      'v4.0 over v3.1',
      { cvssMetricV40: [m('Secondary', 9.3, 'cna')], cvssMetricV31: [m('Primary', 9.8)] },
      ['4.0', 9.3, 'cna'],
    ],
    [
      'v3.1 over v3.0',
      { cvssMetricV30: [m('Primary', 5.0)], cvssMetricV31: [m('Secondary', 6.0, 'cna')] },
      ['3.1', 6.0, 'cna'],
    ],
    [
      'v3.0 over v2',
      { cvssMetricV2: [m('Primary', 10)], cvssMetricV30: [m('Primary', 4.0)] },
      ['3.0', 4.0, 'nvd@nist.gov'],
    ],
    ['v2 alone', { cvssMetricV2: [m('Secondary', 7.5, 'cna')] }, ['2.0', 7.5, 'cna']],
    [
      'Primary over an earlier Secondary',
      { cvssMetricV31: [m('Secondary', 9.8, 'cna'), m('Primary', 7.2)] },
      ['3.1', 7.2, 'nvd@nist.gov'],
    ],
    [
      'the first of several Secondary',
      { cvssMetricV31: [m('Secondary', 5.5, 'cna-a'), m('Secondary', 6.5, 'cna-b')] },
      ['3.1', 5.5, 'cna-a'],
    ],
    [
      'an empty newer list falls through',
      { cvssMetricV40: [], cvssMetricV31: [m('Primary', 8.1)] },
      ['3.1', 8.1, 'nvd@nist.gov'],
    ],
    ['score 0 is a score', { cvssMetricV31: [m('Primary', 0)] }, ['3.1', 0, 'nvd@nist.gov']],
  ])('%s', (_name, metrics, [version, score, source]) => {
    expect(chooseCvss(metrics, 'x')).toMatchObject({ version, score, source });
  });

  it.each([[undefined], [null], [{}], [{ cvssMetricV31: [] }], [{ somethingElse: [m('Primary', 9)] }]])(
    'is null without CVSS metrics: %j',
    (metrics) => {
      expect(chooseCvss(metrics, 'x')).toBeNull();
    },
  );

  it('keeps the vector and type, and a missing vector as null', () => {
    expect(chooseCvss({ cvssMetricV31: [m('Primary', 9.8, 'nvd@nist.gov', 'CVSS:3.1/AV:N')] }, 'x')).toEqual({
      score: 9.8,
      version: '3.1',
      vector: 'CVSS:3.1/AV:N',
      source: 'nvd@nist.gov',
      type: 'Primary',
    });
    expect(
      chooseCvss({ cvssMetricV2: [{ type: 'Primary', cvssData: { baseScore: 5 } }] }, 'x'),
    ).toMatchObject({
      vector: null,
      source: null,
    });
  });

  it.each([
    [[], 'CVE-X: metrics is not an object'],
    [{ cvssMetricV31: {} }, 'CVE-X: cvssMetricV31 is not an array'],
    [
      { cvssMetricV31: [m('Primary', '9.8')] },
      'CVE-X cvssMetricV31[0]: cvssData.baseScore "9.8" is not a number in [0, 10]',
    ],
    [
      { cvssMetricV2: [m('Primary', 10.5)] },
      'CVE-X cvssMetricV2[0]: cvssData.baseScore 10.5 is not a number in [0, 10]',
    ],
    [{ cvssMetricV40: [null] }, 'CVE-X cvssMetricV40[0]: not an object'],
  ])('rejects malformed metrics %j', (metrics, message) => {
    expect(() => chooseCvss(metrics, 'CVE-X')).toThrow(message);
  });
});

describe('parseNvdVulnerability', () => {
  it('reads the id (upper-cased), rejected status and missing metrics', () => {
    expect(
      parseNvdVulnerability(
        { cve: { id: 'cve-2024-0001', metrics: { cvssMetricV31: [m('Primary', 9)] } } },
        0,
      ),
    ).toMatchObject({
      cveId: 'CVE-2024-0001',
      kind: 'score',
      cvss: { score: 9 },
    });
    expect(
      parseNvdVulnerability({ cve: { id: 'CVE-2024-0002', vulnStatus: 'Rejected', metrics: {} } }, 1),
    ).toEqual({
      cveId: 'CVE-2024-0002',
      kind: 'rejected',
    });
    expect(parseNvdVulnerability({ cve: { id: 'CVE-2024-0003', vulnStatus: 'Received' } }, 2)).toEqual({
      cveId: 'CVE-2024-0003',
      kind: 'no-metrics',
    });
  });

  it.each([
    [null, 'vulnerabilities[4]: no "cve" object'],
    [{ id: 'CVE-2024-0001' }, 'vulnerabilities[4]: no "cve" object'],
    [{ cve: { id: 'GHSA-1' } }, 'vulnerabilities[4]: cve.id "GHSA-1" is not a CVE id'],
    [{ cve: {} }, 'vulnerabilities[4]: cve.id undefined is not a CVE id'],
  ])('rejects %j', (raw, message) => {
    expect(() => parseNvdVulnerability(raw, 4)).toThrow(message);
  });
});
