import { describe, expect, it } from 'vitest';
import { parseFixture } from '../fixture-paths.js';

/* Field-by-field checks of chosen findings; values read from the files by hand. */

describe('CLI fields', () => {
  it('reads CLI findings JSON with string and object locations', async () => {
    const { findings } = await parseFixture('own:cli-findings.json');
    expect(
      findings.map((f) => [f.scanner, f.ruleId, f.asset.file, f.asset.line, f.asset.ip, f.port]),
    ).toEqual([
      ['acme-scan', 'ACME-SQLI-001', 'src/auth/login.ts', 42, null, null],
      ['acme-scan', null, 'Dockerfile', 3, '10.4.0.12', null],
      ['acme-scan', null, null, null, '10.4.0.13', 23],
    ]);
    expect(findings[1]?.cveIds).toEqual(['CVE-2022-0778', 'CVE-2023-0286']);
  });
});
