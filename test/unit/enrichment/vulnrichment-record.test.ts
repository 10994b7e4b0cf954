import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseVulnrichmentRecord } from '../../../src/domain/enrichment/vulnrichment-record.js';

const DIR = 'test/fixtures/enrichment/vulnrichment';
const read = (name: string): unknown => JSON.parse(readFileSync(path.join(DIR, name), 'utf8'));
const files = readdirSync(DIR, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.json'));

describe('a CISA Vulnrichment record', () => {
  it('gives CISA’s decision points in every one of the 300 real records', () => {
    expect(files).toHaveLength(300);
    for (const f of files) {
      const { cveId, ssvc } = parseVulnrichmentRecord(read(f), f);
      expect(`${cveId}.json`).toBe(path.basename(f));
      expect(ssvc).not.toBeNull();
      expect(ssvc!.version).toBe('2.0.3');
    }
  });

  it('maps CISA’s words to the decision table’s, whatever their case', () => {
    expect(parseVulnrichmentRecord(read('2019/0xxx/CVE-2019-0344.json'), 'x')).toEqual({
      cveId: 'CVE-2019-0344',
      ssvc: {
        exploitation: 'active',
        automatable: 'yes',
        technicalImpact: 'total',
        version: '2.0.3',
        scoredAt: new Date('2024-10-04T13:32:40.662Z'),
      },
    });
    const poc = parseVulnrichmentRecord(read('2023/36xxx/CVE-2023-36140.json'), 'x').ssvc!;
    expect(poc.exploitation).toBe('public_poc');
    const capitalised = files
      .map((f) => JSON.stringify(read(f)))
      .find((text) => text.includes('"Exploitation":"Active"'));
    expect(capitalised).toBeDefined();
    expect(parseVulnrichmentRecord(JSON.parse(capitalised!), 'x').ssvc!.exploitation).toBe('active');
  });

  it('has no decision where CISA gave none, and refuses what is not a CVE record', () => {
    const record = read('2019/0xxx/CVE-2019-0344.json') as { containers: { adp: unknown[] } };
    const bare = { ...record, containers: { ...record.containers, adp: [] } };
    expect(parseVulnrichmentRecord(bare, 'x')).toEqual({ cveId: 'CVE-2019-0344', ssvc: null });
    expect(() => parseVulnrichmentRecord({ cveId: 'CVE-2019-0344' }, 'line 3')).toThrow(
      /not a CVE JSON 5 record.*line 3|line 3.*not a CVE JSON 5 record/,
    );
  });

  it('names the record and the value CISA’s vocabulary does not have', () => {
    const text = readFileSync(path.join(DIR, '2019/0xxx/CVE-2019-0344.json'), 'utf8');
    const odd = JSON.parse(text.replace('"Exploitation": "active"', '"Exploitation": "constant"'));
    expect(() => parseVulnrichmentRecord(odd, 'CVE-2019-0344.json')).toThrow(/Exploitation.*constant/);
    const hostile = JSON.parse(text.replace('"Exploitation": "active"', '"Exploitation": "__proto__"'));
    expect(() => parseVulnrichmentRecord(hostile, 'x')).toThrow(/Exploitation/);
  });
});
