import { describe, expect, it } from 'vitest';
import { collectCves, extractCves, uniq } from '../../../../src/parsers/format-parser.js';
import { RecordCollector } from '../../../../src/parsers/qualys/common.js';

describe('collectCves', () => {
  it.each([
    ['', []],
    ['CVE-2021-4428', ['CVE-2021-4428']],
    [
      'cve-2021-44228 and CVE-2021-44228, CVE-2022-0001',
      ['CVE-2021-44228', 'CVE-2021-44228', 'CVE-2022-0001'],
    ],
    ['http://cve.mitre.org/cgi-bin/cvename.cgi?name=CVE-2002-0510', ['CVE-2002-0510']],
    ['CVE-20-1', []],
  ])('collects the CVEs of %j, duplicates included, upper-cased', (text, expected) => {
    const out: string[] = ['before'];
    collectCves(text, out);
    expect(out).toEqual(['before', ...expected]);
    expect(uniq(out.slice(1))).toEqual(extractCves(text));
  });
});

describe('RecordCollector', () => {
  const leaves: [string[], string][] = [
    [['TITLE'], 'Oracle Java SE'],
    [['CVE_ID_LIST', 'CVE_ID', 'ID'], 'cve-2015-0412'],
    [['CVE_ID_LIST', 'CVE_ID', 'URL'], 'http://cve.mitre.org/cgi-bin/cvename.cgi?name=CVE-2015-0412'],
    [['CVE_ID_LIST', 'CVE_ID'], ''],
    [['CVE_ID_LIST', 'CVE_ID', 'ID'], 'CVE-2014-6549'],
    [['CVE_ID_LIST'], ''],
    [['CVE_ID'], 'CVE-2016-0001 CVE-2014-6601'],
    [['CVE_ID', 'ID'], 'CVE-2017-0001'],
    [['BUGTRAQ_ID_LIST', 'BUGTRAQ_ID', 'ID'], '4314'],
    [['BUGTRAQ_ID_LIST', 'BUGTRAQ_ID', 'ID'], '4315'],
    [['TITLE'], 'second title'],
  ];

  it('takes CVEs from the CVE list, a direct CVE_ID and the cveid attribute, in first-seen order', () => {
    const r = new RecordCollector(3, { cveid: 'CVE-2014-6601,CVE-2015-0412' });
    for (const [rel, text] of leaves) r.add(['SCAN', 'IP', 'VULN', ...rel], text);
    expect(r.cveIds()).toEqual(['CVE-2014-6601', 'CVE-2015-0412', 'CVE-2014-6549', 'CVE-2016-0001']);
  });

  it('keeps the first text of every other leaf by its relative path', () => {
    const r = new RecordCollector(3, {});
    for (const [rel, text] of leaves) r.add(['SCAN', 'IP', 'VULN', ...rel], text);
    expect([...r.fields]).toEqual([
      ['TITLE', 'Oracle Java SE'],
      ['CVE_ID_LIST', ''],
      ['CVE_ID/ID', 'CVE-2017-0001'],
      ['BUGTRAQ_ID_LIST/BUGTRAQ_ID/ID', '4314'],
    ]);
  });
});
