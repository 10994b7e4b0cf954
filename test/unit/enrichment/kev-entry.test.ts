import { describe, expect, it } from 'vitest';
import { isIsoDate } from '../../../src/domain/enrichment/formats.js';
import { parseKevEntry } from '../../../src/domain/enrichment/kev-entry.js';

const ENTRY = {
  cveID: 'CVE-2021-44228',
  vendorProject: 'Apache',
  product: 'Log4j2',
  vulnerabilityName: 'Apache Log4j2 Remote Code Execution Vulnerability',
  dateAdded: '2021-12-10',
  shortDescription: '...',
  requiredAction: '...',
  dueDate: '2021-12-24',
  knownRansomwareCampaignUse: 'Known',
  notes: '',
  cwes: ['CWE-20', 'CWE-400', 'CWE-502'],
};

describe('parseKevEntry', () => {
  it('reads the fields we store and ignores the rest', () => {
    expect(parseKevEntry(ENTRY, 0)).toEqual({
      cveId: 'CVE-2021-44228',
      vendorProject: 'Apache',
      product: 'Log4j2',
      vulnerabilityName: 'Apache Log4j2 Remote Code Execution Vulnerability',
      dateAdded: '2021-12-10',
      dueDate: '2021-12-24',
      knownRansomware: true,
    });
  });

  it.each([
    [{ knownRansomwareCampaignUse: 'Unknown' }, { knownRansomware: false }],
    [{ knownRansomwareCampaignUse: undefined }, { knownRansomware: false }],
    [{ knownRansomwareCampaignUse: 'known' }, { knownRansomware: true }],
    [{ cveID: ' cve-2021-44228 ' }, { cveId: 'CVE-2021-44228' }],
    [{ dueDate: null }, { dueDate: null }],
    [{ product: null }, { product: null }],
  ])('reads %j', (patch, expected) => {
    expect(parseKevEntry({ ...ENTRY, ...patch }, 0)).toMatchObject(expected);
  });

  it.each([
    ['a string', 'vulnerabilities[3]: not an object'],
    [{ ...ENTRY, cveID: 'CVE-21-1' }, 'vulnerabilities[3]: cveID "CVE-21-1" is not a CVE id'],
    [{ ...ENTRY, cveID: undefined }, 'vulnerabilities[3]: cveID undefined is not a CVE id'],
    [
      { ...ENTRY, dateAdded: '12/10/2021' },
      'vulnerabilities[3] (CVE-2021-44228): dateAdded "12/10/2021" is not a YYYY-MM-DD date',
    ],
    [
      { ...ENTRY, dueDate: '2021-02-29' },
      'vulnerabilities[3] (CVE-2021-44228): dueDate "2021-02-29" is not a YYYY-MM-DD date',
    ],
    [{ ...ENTRY, product: 7 }, 'vulnerabilities[3] (CVE-2021-44228): product is not a string'],
    [
      { ...ENTRY, knownRansomwareCampaignUse: true },
      'vulnerabilities[3] (CVE-2021-44228): knownRansomwareCampaignUse is not a string',
    ],
  ])('rejects %j', (raw, message) => {
    expect(() => parseKevEntry(raw, 3)).toThrow(message);
  });
});

describe('isIsoDate', () => {
  it.each([
    ['2024-02-29', true],
    ['2023-02-29', false],
    ['2021-12-10', true],
    ['2021-13-01', false],
    ['2021-1-01', false],
    ['2021-12-10T00:00:00Z', false],
  ])('%s → %s', (value, ok) => {
    expect(isIsoDate(value)).toBe(ok);
  });
});
