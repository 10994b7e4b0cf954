import { describe, expect, it } from 'vitest';
import { parseFixture } from '../fixture-paths.js';

/* Field-by-field checks of chosen findings; values read from the files by hand. */

describe('SARIF fields', () => {
  it('resolves rules from extensions, security-severity, CWE tags and partial fingerprints across runs', async () => {
    const { findings } = await parseFixture('own:sarif-extensions.sarif');
    expect(findings[0]).toMatchObject({
      scanner: 'CodeQL',
      ruleId: 'js/sql-injection',
      title: 'Database query built from user-controlled sources',
      severity: 'HIGH',
      cweIds: ['CWE-89'],
      asset: { file: 'src/db.js', line: 17 },
      producerFingerprints: { primaryLocationLineHash: 'abc123:1' },
    });
    expect(findings.slice(1).map((f) => [f.scanner, f.severity, f.suppressed])).toEqual([
      ['Semgrep', 'LOW', false],
      ['Semgrep', 'HIGH', false],
      ['Semgrep', 'CRITICAL', false],
    ]);
  });

  it('keeps suppressed results and marks them', async () => {
    const { findings } = await parseFixture('scans/sarif/suppression_test.sarif');
    expect(findings.map((f) => f.suppressed)).toEqual([true, true, true, false, false]);
  });

  it('formats message strings with arguments when a result has no text', async () => {
    const { findings } = await parseFixture('scans/sarif/appendix_k.sarif');
    expect(findings[0]?.evidence).toBe(
      'Variable "ptr" was used without being initialized. It was declared [here](0).',
    );
  });
});
