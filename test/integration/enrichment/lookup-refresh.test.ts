import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEnrichCommand } from '../../../src/cli/enrich-command.js';
import { createCachedEnrichmentLookup } from '../../../src/domain/enrichment/cached-lookup.js';
import { lookupEnrichment } from '../../../src/domain/enrichment/lookup.js';
import { refreshEnrichment } from '../../../src/domain/enrichment/refresh.js';
import type { CveEnrichment } from '../../../src/domain/enrichment/types.js';
import {
  EPSS_SAMPLE,
  importLog,
  KEV_CATALOG,
  LOCAL,
  openEnrichmentDb,
  type EnrichmentDb,
} from './enrichment-db.js';

let db: EnrichmentDb;

beforeAll(async () => {
  db = await openEnrichmentDb();
});

afterAll(async () => {
  await db?.close();
});

const LOG4SHELL: CveEnrichment = {
  cveId: 'CVE-2021-44228',
  kev: true,
  kevRansomware: true,
  kevDateAdded: '2021-12-10',
  kevDueDate: '2021-12-24',
  epss: 0.94358,
  epssPercentile: 0.99989,
  epssDate: null,
  cvssScore: 10,
  cvssVersion: '3.1',
  cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H',
  cisaSsvc: null,
};

describe('refreshEnrichment and lookup', () => {
  it('refreshes all three feeds and reports each one', async () => {
    const summary = await refreshEnrichment(db.pool, {
      kev: { file: KEV_CATALOG },
      epss: { file: path.join(LOCAL, 'epss-no-comment.csv') },
      nvd: [{ file: path.join(LOCAL, 'nvd-page-1.json') }, { file: path.join(LOCAL, 'nvd-page-2.json') }],
    });
    expect(summary.failed).toBe(0);
    expect(summary.outcomes.map((o) => [o.source, o.ok, o.ok ? o.rows : null])).toEqual([
      ['kev', true, 1404],
      ['epss', true, 5],
      ['nvd', true, 7],
      ['nvd', true, 3],
    ]);
  });

  it('looks up many CVEs in one call; ids are normalised and unknown ones are absent', async () => {
    const found = await lookupEnrichment(db.pool, [
      'cve-2021-44228',
      ' CVE-2021-44228 ',
      'CVE-2025-48384',
      'CVE-2099-0003',
      'CVE-2099-0002',
      'CVE-2000-99999',
      '',
    ]);
    expect([...found.keys()].sort()).toEqual([
      'CVE-2021-44228',
      'CVE-2025-48384',
      'CVE-2099-0002',
      'CVE-2099-0003',
    ]);
    expect(found.get('CVE-2021-44228')).toEqual(LOG4SHELL);
    // In KEV only.
    expect(found.get('CVE-2025-48384')).toEqual({
      cveId: 'CVE-2025-48384',
      kev: true,
      kevRansomware: false,
      kevDateAdded: '2025-08-25',
      kevDueDate: '2025-09-15',
      epss: null,
      epssPercentile: null,
      epssDate: null,
      cvssScore: null,
      cvssVersion: null,
      cvssVector: null,
      cisaSsvc: null,
    });
    // EPSS and NVD, not in KEV; the score updated by page 2.
    expect(found.get('CVE-2099-0003')).toEqual({
      cveId: 'CVE-2099-0003',
      kev: false,
      kevRansomware: false,
      kevDateAdded: null,
      kevDueDate: null,
      epss: 0.5,
      epssPercentile: 1,
      epssDate: null,
      cvssScore: 8.8,
      cvssVersion: '3.1',
      cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H',
      cisaSsvc: null,
    });
    expect(found.get('CVE-2099-0002')).toMatchObject({
      kev: false,
      epss: 0.00043,
      cvssScore: 9.2,
      cvssVersion: '4.0',
    });
    expect(await lookupEnrichment(db.pool, [])).toEqual(new Map());
    expect(await lookupEnrichment(db.pool, ['CVE-1900-0001'])).toEqual(new Map());
  });

  it('serves repeated lookups from the cache until the TTL ends', async () => {
    let now = 1_000;
    const lookup = createCachedEnrichmentLookup(db.pool, { ttlMs: 60_000, max: 100, now: () => now });
    expect((await lookup(['CVE-2021-44228', 'CVE-2000-99999'])).get('CVE-2021-44228')).toEqual(LOG4SHELL);
    await db.pool.query("UPDATE epss_scores SET epss = 0.5 WHERE cve_id = 'CVE-2021-44228'");
    try {
      expect((await lookup(['cve-2021-44228'])).get('CVE-2021-44228')?.epss).toBe(0.94358);
      now += 60_001;
      expect((await lookup(['CVE-2021-44228'])).get('CVE-2021-44228')?.epss).toBe(0.5);
    } finally {
      await db.pool.query("UPDATE epss_scores SET epss = 0.94358 WHERE cve_id = 'CVE-2021-44228'");
    }
  });

  it('reports a failed source without stopping the others, and keeps its previous data', async () => {
    const summary = await refreshEnrichment(db.pool, {
      kev: { file: path.join(LOCAL, 'kev-bad-date.json') },
      epss: { file: EPSS_SAMPLE },
    });
    expect(summary.failed).toBe(1);
    const [kev, epss] = summary.outcomes;
    expect(kev).toMatchObject({ ok: false, source: 'kev', origin: 'kev-bad-date.json' });
    expect(kev && !kev.ok ? kev.error.code : null).toBe('malformed_input');
    expect(epss).toMatchObject({ ok: true, source: 'epss', rows: 29, scoreDate: '2026-09-29' });
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM kev_entries');
    expect(rows[0]?.n).toBe(1404);
  });
});

describe('enrich command', () => {
  it('loads the given sources and prints one line each', async () => {
    const lines: string[] = [];
    const code = await runEnrichCommand(
      [
        '--kev',
        path.join(LOCAL, 'kev-small.json'),
        `--epss=${EPSS_SAMPLE}`,
        '--nvd',
        path.join(LOCAL, 'nvd-page-2.json'),
      ],
      { db: db.pool, out: (l) => lines.push(l) },
    );
    expect(code).toBe(0);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^kev: 2 entries \(catalog 2026\.09\.29\) from kev-small\.json in \d+\.\d s$/);
    expect(lines[1]).toMatch(
      /^epss: 29 scores \(score date 2026-09-29, model v2026\.06\.15\) from epss_scores-sample\.csv in \d+\.\d s$/,
    );
    expect(lines[2]).toMatch(
      /^nvd: 3 CVSS scores upserted, 0 CVEs without metrics, 1 rejected removed, from nvd-page-2\.json in \d+\.\d s$/,
    );
    expect((await importLog(db.pool)).slice(-3)).toEqual([
      { source: 'kev', origin: 'kev-small.json', rows: 2 },
      { source: 'epss', origin: 'epss_scores-sample.csv', rows: 29 },
      { source: 'nvd', origin: 'nvd-page-2.json', rows: 3 },
    ]);
  });

  it('exits 1 and says why when an import fails', async () => {
    const lines: string[] = [];
    const code = await runEnrichCommand(['--epss', path.join(LOCAL, 'epss-bad-value.csv')], {
      db: db.pool,
      out: (l) => lines.push(l),
    });
    expect(code).toBe(1);
    expect(lines).toEqual([
      'epss: FAILED (malformed_input): epss import from epss-bad-value.csv failed: line 5: epss "1.70000" is not a number in [0, 1]',
    ]);
  });
});
