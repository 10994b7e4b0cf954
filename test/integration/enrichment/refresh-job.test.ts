import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/test-app.js';
import { testRedisUrl } from '../../helpers/db.js';
import { startProcessWorkers } from '../../../src/app/workers.js';

const KEV = path.resolve('test/fixtures/enrichment/known_exploited_vulnerabilities.json.gz');
const EPSS = path.resolve('test/fixtures/enrichment/epss_scores-sample.csv');
const apps: TestApp[] = [];
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const s of stops) await s();
  for (const a of apps) await a.close();
});

describe.each([
  { name: 'PostgreSQL', redis: '' },
  { name: 'Redis', redis: testRedisUrl() },
])('the scheduled enrichment refresh on $name', ({ name, redis }) => {
  it.skipIf(name === 'Redis' && !redis)(
    'loads the configured KEV and EPSS sources through the repeatable job',
    async () => {
      const t = await startTestApp({
        ...(redis ? { redisUrl: redis } : {}),
        env: {
          ENRICHMENT_KEV_SOURCE: KEV,
          ENRICHMENT_EPSS_SOURCE: EPSS,
          ENRICHMENT_REFRESH_EVERY_MS: '3600000',
        },
      });
      apps.push(t);
      const config = t.deps.config;
      const workers = await startProcessWorkers(config, t.infra, t.deps);
      stops.push(() => workers.close());
      let kev = 0;
      let epss = 0;
      for (let i = 0; i < 300 && (kev < 1404 || epss === 0); i++) {
        await new Promise((r) => setTimeout(r, 100));
        kev = (await t.infra.pool.query('SELECT count(*)::int AS n FROM kev_entries')).rows[0].n;
        epss = (await t.infra.pool.query('SELECT count(*)::int AS n FROM epss_scores')).rows[0].n;
      }
      expect(kev).toBe(1404);
      expect(epss).toBe(29);
      const imports = await t.infra.pool.query(`SELECT source, rows FROM enrichment_imports ORDER BY id`);
      expect(imports.rows).toEqual([
        { source: 'kev', rows: 1404 },
        { source: 'epss', rows: 29 },
      ]);
    },
    60_000,
  );
});
