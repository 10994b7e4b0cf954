import { describe, expect, it } from 'vitest';
import { ENRICH_USAGE, parseEnrichArgs, runEnrichCommand } from '../../../src/cli/enrich-command.js';
import type { Pool } from '../../../src/db/pool.js';

/** A pool that fails the test if argument errors ever reach the database. */
const untouchable = new Proxy({} as Pool, {
  get: (_t, prop) => {
    throw new Error(`the database was used (${String(prop)})`);
  },
});

describe('parseEnrichArgs', () => {
  it.each([
    [['--kev', 'kev.json'], { kev: { file: 'kev.json' } }],
    [['--epss=https://x.example/epss.csv.gz'], { epss: { url: 'https://x.example/epss.csv.gz' } }],
    [
      ['--nvd', 'a.json', '--nvd', 'http://127.0.0.1/b.json', '--kev', 'k.json'],
      { kev: { file: 'k.json' }, nvd: [{ file: 'a.json' }, { url: 'http://127.0.0.1/b.json' }] },
    ],
  ])('%j', (argv, sources) => {
    expect(parseEnrichArgs(argv)).toEqual(sources);
  });
});

describe('runEnrichCommand', () => {
  it.each([
    [[], 'enrich: give at least one of --kev, --epss, --nvd, --vulnrichment'],
    [['--kev'], /^enrich: Option '--kev <value>' argument missing/],
    [['--kev', 'a.json', '--kev', 'b.json'], 'enrich: --kev given more than once'],
    [['--epss', ''], 'enrich: --epss needs a FILE or URL'],
    [['--cvss', 'x'], /^enrich: Unknown option '--cvss'/],
    [['kev.json'], 'enrich: unexpected argument "kev.json"'],
  ])('exits 2 with the usage line for %j', async (argv, message) => {
    const lines: string[] = [];
    expect(await runEnrichCommand(argv, { db: untouchable, out: (l) => lines.push(l) })).toBe(2);
    expect(lines).toEqual([
      typeof message === 'string' ? message : expect.stringMatching(message),
      ENRICH_USAGE,
    ]);
  });

  it('prints the usage line for --help and exits 0', async () => {
    const lines: string[] = [];
    expect(await runEnrichCommand(['enrich', '--help'], { db: untouchable, out: (l) => lines.push(l) })).toBe(
      0,
    );
    expect(lines).toEqual([ENRICH_USAGE]);
  });
});
