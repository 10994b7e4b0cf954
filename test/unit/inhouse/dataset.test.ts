import { describe, expect, it } from 'vitest';
import { InhouseDatasetError, parseCsv, parseLabelledDataset } from '../../../src/domain/inhouse/dataset.js';

const HEADER = 'cve,exploitation,automatable,technical_impact,in_kev,cvss_base,cvss_vector,description';

describe('labelled dataset', () => {
  it('splits RFC 4180 CSV with quoted commas, doubled quotes, newlines in quotes and CRLF', () => {
    expect(parseCsv('a,"b,1","say ""hi"""\r\nx,"multi\nline",\n')).toEqual([
      { line: 1, fields: ['a', 'b,1', 'say "hi"'] },
      { line: 2, fields: ['x', 'multi\nline', ''] },
    ]);
  });

  it('maps dataset labels onto the SSVC types (poc is public_poc) and empty CVSS to null', () => {
    const rows = parseLabelledDataset(
      `${HEADER}\nCVE-2024-0001,poc,yes,total,1,9.8,CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H,"Remote code execution, unauthenticated"\n` +
        'CVE-2024-0002,none,no,partial,0,,,Some text\n',
    );
    expect(rows).toEqual([
      {
        cve: 'CVE-2024-0001',
        exploitation: 'public_poc',
        automatable: 'yes',
        technicalImpact: 'total',
        kev: true,
        cvssScore: 9.8,
        cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
        description: 'Remote code execution, unauthenticated',
      },
      {
        cve: 'CVE-2024-0002',
        exploitation: 'none',
        automatable: 'no',
        technicalImpact: 'partial',
        kev: false,
        cvssScore: null,
        cvssVector: null,
        description: 'Some text',
      },
    ]);
  });

  it('accepts the columns in another order', () => {
    const rows = parseLabelledDataset(
      'description,cve,in_kev,exploitation,automatable,technical_impact,cvss_base,cvss_vector\nText,CVE-2024-0003,0,active,no,total,,\n',
    );
    expect(rows[0]).toMatchObject({ cve: 'CVE-2024-0003', exploitation: 'active', description: 'Text' });
  });

  it.each([
    ['', 'the dataset is empty (expected a header line)'],
    [`${HEADER}\n`, 'the dataset has a header but no rows'],
    ['cve,exploitation\nCVE-2024-0001,none\n', 'header is missing column(s) automatable, technical_impact'],
    [`${HEADER}\nCVE-2024-0001,none,no,partial,0,,\n`, 'line 2: expected 8 fields, found 7'],
    [
      `${HEADER}\nCVE-2024-0001,maybe,no,partial,0,,,x\n`,
      'line 2: exploitation is "maybe", expected none|poc|active',
    ],
    [`${HEADER}\nCVE-2024-0001,none,no,partial,2,,,x\n`, 'line 2: in_kev is "2", expected 0|1'],
    [
      `${HEADER}\nCVE-2024-0001,none,no,partial,0,11,,x\n`,
      'line 2: cvss_base is "11", expected empty or a number in [0, 10]',
    ],
    [`${HEADER}\nCVE-24-1,none,no,partial,0,,,x\n`, 'line 2: bad cve "CVE-24-1"'],
    [
      `${HEADER}\nCVE-2024-0001,none,no,partial,0,,,x\nCVE-2024-0001,none,no,partial,0,,,x\n`,
      'line 3: duplicate cve CVE-2024-0001',
    ],
    [`${HEADER}\nCVE-2024-0001,none,no,partial,0,,,"open`, 'line 2: unterminated quoted field'],
  ])('refuses a bad file with a message naming the problem %#', (text, message) => {
    expect(() => parseLabelledDataset(text)).toThrow(InhouseDatasetError);
    expect(() => parseLabelledDataset(text)).toThrow(message);
  });
});
