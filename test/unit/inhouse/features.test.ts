import { describe, expect, it } from 'vitest';
import {
  extractFeatures,
  parseCvssVector,
  structuredFeatures,
  textTerms,
  tokenize,
} from '../../../src/domain/inhouse/features.js';

const base = { kev: false, cvssScore: null, cvssVector: null, text: '' };

describe('in-house features', () => {
  it('tokenizes lower-case words without stopwords, bare numbers or one-letter tokens', () => {
    expect(tokenize('A Remote Code-Execution in Foo 2.4.1 via the X header')).toEqual([
      'remote',
      'code',
      'execution',
      'foo',
      'header',
    ]);
  });

  it('yields unigrams and adjacent bigrams once each', () => {
    expect(textTerms('SQL injection; sql injection')).toEqual([
      'sql',
      'sql injection',
      'injection',
      'injection sql',
    ]);
  });

  it('reads only the first 500 characters of text, as the training descriptions are cut', () => {
    const text = `${'pad '.repeat(125)}ransomware`;
    expect(tokenize(text)).not.toContain('ransomware');
    expect(tokenize(`ransomware ${text}`)).toContain('ransomware');
  });

  it('parses CVSS v3.0, v3.1 and v4.0 vectors and rejects v2 and incomplete ones', () => {
    expect(parseCvssVector('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H')).toEqual({
      version: 'v3',
      metrics: { AV: 'N', AC: 'L', PR: 'N', UI: 'N', S: 'U', C: 'H', I: 'H', A: 'H' },
    });
    expect(parseCvssVector('CVSS:3.0/AV:L/AC:H/PR:L/UI:R/S:C/C:L/I:N/A:N')?.version).toBe('v3');
    expect(
      parseCvssVector('CVSS:4.0/AV:N/AC:H/AT:N/PR:N/UI:N/VC:L/VI:L/VA:L/SC:N/SI:N/SA:N')?.metrics.VC,
    ).toBe('L');
    expect(parseCvssVector('AV:N/AC:L/Au:N/C:P/I:P/A:P')).toBeNull();
    expect(parseCvssVector('CVSS:3.1/AV:N/AC:L')).toBeNull();
    expect(parseCvssVector(null)).toBeNull();
  });

  it.each([
    [{ ...base }, ['cvss:absent', 'vector:absent']],
    [{ ...base, kev: true, cvssScore: 9.8 }, ['kev', 'cvss:score', 'cvss:band:critical', 'vector:absent']],
    [{ ...base, cvssScore: 7.0 }, ['cvss:score', 'cvss:band:high', 'vector:absent']],
    [{ ...base, cvssScore: 4.0 }, ['cvss:score', 'cvss:band:medium', 'vector:absent']],
    [{ ...base, cvssScore: 3.9 }, ['cvss:score', 'cvss:band:low', 'vector:absent']],
  ])('derives structured features from KEV and score %#', (input, names) => {
    expect(structuredFeatures(input).names).toEqual(names);
  });

  it('scales the score to [0, 1] and one-hots every v3 metric plus CIA and reachability combinations', () => {
    const f = structuredFeatures({
      ...base,
      cvssScore: 8.8,
      cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H',
    });
    expect(f.values[f.names.indexOf('cvss:score')]).toBeCloseTo(0.88);
    expect(f.names).toEqual(
      expect.arrayContaining(['v3:AV:N', 'v3:PR:L', 'v3:S:U', 'v3:CIA:HHH', 'v3:AVPRUI:NLN']),
    );
  });

  it('prefixes text terms with t: after the structured features', () => {
    const f = extractFeatures({ ...base, text: 'Denial of service' });
    expect(f.names).toEqual(['cvss:absent', 'vector:absent', 't:denial', 't:denial service', 't:service']);
    expect(f.values.every((v) => v === 1)).toBe(true);
  });
});
