import { describe, expect, it } from 'vitest';
import { completeFinding } from '../../../src/parsers/complete-finding.js';
import { boundExcerpt } from '../../../src/parsers/format-parser.js';
import { DEFAULT_LIMITS, EXCERPT_TRUNCATION_MARKER, MAX_TITLE_BYTES } from '../../../src/parsers/types.js';

const bytes = (s: string | null) => Buffer.byteLength(s ?? '', 'utf8');

describe('completeFinding bounds what a finding stores', () => {
  it('cuts long texts at the field bound and long titles at 1 KiB, marked, on a character boundary', () => {
    const huge = 'é'.repeat(3 * 1024 * 1024); // 6 MiB of two-byte characters, under the 8 MiB token limit
    const f = completeFinding(
      {
        scanner: 'nessus',
        title: 'T'.repeat(5000),
        severity: 'HIGH',
        description: huge,
        solution: 'Upgrade.',
        evidence: huge,
        rawExcerpt: huge,
      },
      'nessus',
      0,
      DEFAULT_LIMITS,
    );
    for (const text of [f.description, f.evidence]) {
      expect(bytes(text)).toBeLessThanOrEqual(DEFAULT_LIMITS.maxFieldBytes);
      expect(bytes(text)).toBeGreaterThan(DEFAULT_LIMITS.maxFieldBytes * 0.8);
      expect(text!.endsWith(EXCERPT_TRUNCATION_MARKER)).toBe(true);
      expect(text).not.toContain('\ufffd');
    }
    expect(f.solution).toBe('Upgrade.');
    expect(bytes(f.title)).toBeLessThanOrEqual(MAX_TITLE_BYTES);
    expect(f.title.endsWith(EXCERPT_TRUNCATION_MARKER)).toBe(true);
    expect(bytes(f.rawExcerpt)).toBeLessThanOrEqual(DEFAULT_LIMITS.maxExcerptBytes);
  });

  it('keeps texts within the bounds unchanged and absent ones null', () => {
    const f = completeFinding(
      { scanner: 'sarif', title: 'Short', severity: 'LOW', description: 'x'.repeat(64 * 1024) },
      'sarif',
      3,
      { maxExcerptBytes: 100, maxFieldBytes: 64 * 1024 },
    );
    expect(f.description).toBe('x'.repeat(64 * 1024));
    expect(f.title).toBe('Short');
    expect(f.solution).toBeNull();
    expect(f.evidence).toBeNull();
  });
});

describe('boundExcerpt', () => {
  it('keeps the longest prefix that fits, whatever the width of the characters', () => {
    const marker = Buffer.byteLength(EXCERPT_TRUNCATION_MARKER, 'utf8');
    for (const unit of ['a', 'é', '語', '😀', 'a😀é語']) {
      const text = unit.repeat(5000);
      for (const max of [marker + 1, marker + 7, 100, 4096]) {
        const cut = boundExcerpt(text, max);
        const kept = cut.slice(0, -EXCERPT_TRUNCATION_MARKER.length);
        expect(cut.endsWith(EXCERPT_TRUNCATION_MARKER)).toBe(true);
        expect(text.startsWith(kept)).toBe(true);
        expect(Buffer.byteLength(cut, 'utf8')).toBeLessThanOrEqual(max);
        // One more character would not have fitted.
        const next = text.slice(0, kept.length + (text.codePointAt(kept.length)! > 0xffff ? 2 : 1));
        expect(Buffer.byteLength(next, 'utf8') + marker).toBeGreaterThan(max);
      }
    }
    expect(boundExcerpt('short', 100)).toBe('short');
  });
});
