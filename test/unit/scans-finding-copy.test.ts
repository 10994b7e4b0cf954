import { describe, expect, it } from 'vitest';
import { evidenceRow } from '../../src/domain/scans/finding-copy.js';
import type { Finding } from '../../src/parsers/index.js';

const finding = (rawExcerpt: string, evidence: string | null) => ({ rawExcerpt, evidence }) as Finding;

describe('COPY text rows of evidence', () => {
  it.each([
    ['plain text', 'abc', 'abc'],
    ['a backslash before an escaped character', 'a\\n\\\tb', 'a\\\\n\\\\\\tb'],
    ['tabs, newlines and carriage returns', 'a\tb\nc\r\nd', 'a\\tb\\nc\\r\\nd'],
    ['NUL, dropped', 'a\u0000b', 'ab'],
  ])('escapes %s', (_name, raw, encoded) => {
    expect(evidenceRow('e', 'f', 's', finding(raw, null))).toBe(`e\tf\ts\t${encoded}\t\\N\n`);
  });

  it('bounds a long excerpt and marks it truncated', () => {
    const row = evidenceRow('e', 'f', 's', finding('x'.repeat(10_000), 'y'));
    expect(row).toBe(`e\tf\ts\t${'x'.repeat(4_000)}…[truncated]\ty\n`);
  });
});
