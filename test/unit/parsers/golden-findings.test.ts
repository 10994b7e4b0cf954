import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SCANNER_FIXTURES, parseFixture } from './fixture-paths.js';

/*
 * Pins every field of every finding the parsers produce from the fixtures, so a change made for
 * speed cannot change the output. Each finding is recorded as its fingerprint and a digest of its
 * whole JSON (recordIndex, excerpt and every normalised field); the parse result (notes, scope)
 * is digested too. Rewrite the file only for a change that is meant to alter the output:
 * UPDATE_GOLDEN=1 npx vitest run test/unit/parsers/golden-findings.test.ts
 */
// Beside this test, not among the fixtures: every file there is a scan something uploads.
const GOLDEN = fileURLToPath(new URL('./golden-findings.json', import.meta.url));
const SKIP = /\.(md|json\.gz)$/;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : SKIP.test(e.name) ? [] : [join(dir, e.name)],
  );
}

const FIXTURES = [...files(join(SCANNER_FIXTURES, 'scans')), ...files(join(SCANNER_FIXTURES, 'parsers'))]
  .map((f) => relative(SCANNER_FIXTURES, f))
  .sort();

const digest = (value: unknown): string =>
  createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 24);

async function outcome(name: string): Promise<unknown> {
  try {
    const { findings, result } = await parseFixture(name);
    return {
      result: digest(result),
      findings: findings.map((f) => `${f.fingerprint.slice(0, 16)} ${digest(f)}`),
    };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe('parser output on every fixture', () => {
  it('equals the pinned findings, field for field', async () => {
    const actual: Record<string, unknown> = {};
    for (const name of FIXTURES) actual[name] = await outcome(name);
    if (process.env.UPDATE_GOLDEN) writeFileSync(GOLDEN, `${JSON.stringify(actual, null, 1)}\n`);
    const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, unknown>;
    for (const name of FIXTURES) expect(actual[name], name).toEqual(golden[name]);
    expect(Object.keys(actual).sort()).toEqual(Object.keys(golden).sort());
  });
});
