/**
 * CPU one triage request costs this process, one request at a time, in process (`app.inject`):
 * `process.cpuUsage()` summed over `--requests` sequential `POST /api/v1/triage`, and in the same
 * run, interleaved block by block, as many `GET /api/v1/keys/me` with the same key (framework,
 * key check, metering: the baseline). "triage logic" is the difference: from the route's entry to
 * its reply, the store statement's client side and the provider client included, auth excluded.
 * CPU time, unlike wall time, barely moves when other work loads the machine.
 *
 * The instant fake provider runs in a child process (its CPU is not counted); PostgreSQL's
 * backend CPU is not counted either (see `http-overhead.ts` for that).
 *
 *   npx tsx bench/triage/cpu-per-request.ts [--requests 2000] [--engines local,instant]
 *
 * For a profile of the same loop: `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx
 * bench/triage/cpu-per-request.ts --engines instant` (open the .cpuprofile in Chrome DevTools).
 * The script only uses `createBenchDatabase`, `startTestApp`, `signUp`, `remoteTriageEnv` and the OpenAI fake, so the
 * same file runs on older commits (used to bisect; bench/README.md "Triage path, session 8").
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createBenchDatabase } from '../lib/bench-db.js';
import { BENCH_TRIAGE_PAYLOAD } from '../lib/triage-request.js';

if (process.argv.includes('--serve-fake')) {
  const { startOpenAiFake } = await import('../../test/helpers/fake-providers/openai-fake.js');
  const fake = await startOpenAiFake();
  process.on('disconnect', () => process.exit(0));
  process.send!({ url: fake.url });
} else {
  await main();
}

async function main() {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '2000' },
      engines: { type: 'string', default: 'local,instant' },
      block: { type: 'string', default: '50' },
    },
  });
  const N = Number(values.requests);
  const BLOCK = Number(values.block);
  const { signUp, startTestApp } = await import('../../test/helpers/test-app.js');
  const { remoteTriageEnv } = await import('../../test/helpers/triage-setup.js');

  const child = fork(fileURLToPath(import.meta.url), ['--serve-fake'], { execArgv: ['--import', 'tsx'] });
  const fakeUrl = await new Promise<string>((r) =>
    child.once('message', (m) => r((m as { url: string }).url)),
  );

  const cpu = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const rows: Record<string, string | number>[] = [];
  for (const engine of values.engines.split(',')) {
    const env: Record<string, string> =
      engine === 'instant' ? remoteTriageEnv({ url: fakeUrl } as Parameters<typeof remoteTriageEnv>[0]) : {};
    const db = await createBenchDatabase('bench_cpu_request');
    const t = await startTestApp({
      databaseUrl: db.url,
      redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
      env: { PLANS_FILE: path.resolve('bench/auth/unlimited-plans.json'), LOG_LEVEL: 'silent', ...env },
    });
    const { key } = await signUp(t.app, {});
    const headers = { 'x-api-key': key };
    const triage = () =>
      t.app.inject({ method: 'POST', url: '/api/v1/triage', headers, payload: BENCH_TRIAGE_PAYLOAD });
    const keysMe = () => t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers });
    for (let i = 0; i < 300; i++) {
      const r = await triage();
      if (r.statusCode !== 200) throw new Error(`triage answered ${r.statusCode}: ${r.body}`);
      await keysMe();
    }
    // Per block, µs a request. Other work on the machine only ever adds CPU time (cache and
    // core sharing), so the quietest blocks (lowest quartile) are the steadiest figure under load.
    const triageBlocks: number[] = [];
    const floorBlocks: number[] = [];
    for (let done = 0; done < N; done += BLOCK) {
      let c = cpu();
      for (let i = 0; i < BLOCK; i++) {
        const r = await triage();
        if (r.statusCode !== 200) throw new Error(`triage answered ${r.statusCode}: ${r.body}`);
      }
      triageBlocks.push((cpu() - c) / BLOCK);
      c = cpu();
      for (let i = 0; i < BLOCK; i++) await keysMe();
      floorBlocks.push((cpu() - c) / BLOCK);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const q1 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 4)]!;
    const [tMean, fMean, tQ1, fQ1] = [
      mean(triageBlocks),
      mean(floorBlocks),
      q1(triageBlocks),
      q1(floorBlocks),
    ];
    rows.push({
      engine,
      requests: N,
      'POST /triage µs (mean | q1)': `${Math.round(tMean)} | ${Math.round(tQ1)}`,
      'GET /keys/me µs (mean | q1)': `${Math.round(fMean)} | ${Math.round(fQ1)}`,
      'triage logic µs (mean | q1)': `${Math.round(tMean - fMean)} | ${Math.round(tQ1 - fQ1)}`,
    });
    await t.close();
    await db.drop();
  }
  child.disconnect();
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`\nCPU of this process per request (process.cpuUsage), load average ${load}`);
  console.table(rows);
}
