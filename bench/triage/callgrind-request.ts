/**
 * Instructions one triage request costs this process, counted by callgrind: unlike CPU time,
 * the count hardly moves when other work loads the machine, so checkouts measured at different
 * times compare (used to bisect; bench/README.md "Triage path, session 8"). Run under valgrind
 * with instrumentation off at start; the script warms the app up (JIT), turns counting on with
 * `callgrind_control`, runs `--requests` sequential `POST /api/v1/triage` (`app.inject`, the
 * instant fake provider in a child process that valgrind does not trace), dumps, then as many
 * `GET /api/v1/keys/me` with the same key (framework + auth: the baseline), dumps, and prints
 * instructions per request of both and their difference ("triage logic").
 *
 *   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg/cg.%p \
 *     node --import tsx bench/triage/callgrind-request.ts --dir /tmp/cg [--requests 200] [--engine instant|local]
 *
 * It only uses `createBenchDatabase`, `startTestApp`, `signUp`, `remoteTriageEnv` and the OpenAI
 * fake, so the file runs unchanged on every commit since before the consolidation.
 */
import { exec, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createBenchDatabase } from '../lib/bench-db.js';

if (process.argv.includes('--serve-fake')) {
  const { startOpenAiFake } = await import('../../test/helpers/fake-providers/openai-fake.js');
  const fake = await startOpenAiFake();
  setInterval(() => (fake.requests.length = 0), 1_000).unref();
  process.on('disconnect', () => process.exit(0));
  process.send!({ url: fake.url });
} else {
  await main();
}

function callgrind(command: string): Promise<void> {
  return new Promise((resolve, reject) =>
    exec(`callgrind_control ${command} ${process.pid}`, (err, out) =>
      err || !/OK/.test(out) ? reject(err ?? new Error(out)) : resolve(),
    ),
  );
}

/** Total instructions of a dump file (`totals:` line). */
function totals(file: string): number {
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('totals:'));
  return Number(line?.split(/\s+/)[1]);
}

async function main() {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '200' },
      engine: { type: 'string', default: 'instant' },
      warmup: { type: 'string', default: '400' },
      dir: { type: 'string' },
    },
  });
  if (!values.dir) throw new Error('--dir: the folder of --callgrind-out-file (cg.%p)');
  const N = Number(values.requests);
  const { signUp, startTestApp } = await import('../../test/helpers/test-app.js');
  const { remoteTriageEnv } = await import('../../test/helpers/triage-setup.js');
  const child = fork(fileURLToPath(import.meta.url), ['--serve-fake'], { execArgv: ['--import', 'tsx'] });
  const fakeUrl = await new Promise<string>((r) =>
    child.once('message', (m) => r((m as { url: string }).url)),
  );
  const env: Record<string, string> =
    values.engine === 'instant'
      ? remoteTriageEnv({ url: fakeUrl } as Parameters<typeof remoteTriageEnv>[0])
      : {};
  const db = await createBenchDatabase('bench_cg_request');
  const t = await startTestApp({
    databaseUrl: db.url,
    redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    env: { PLANS_FILE: path.resolve('bench/auth/unlimited-plans.json'), LOG_LEVEL: 'silent', ...env },
  });
  const { key } = await signUp(t.app, {});
  const headers = { 'x-api-key': key };
  const payload = {
    title: 'Outdated OpenSSL on an internal host',
    severity: 'MEDIUM',
    description: 'OpenSSL 1.1.1 reached end of life',
  };
  const triage = async () => {
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/triage', headers, payload });
    if (r.statusCode !== 200) throw new Error(`triage answered ${r.statusCode}: ${r.body}`);
  };
  const keysMe = () => t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers });
  for (let i = 0; i < Number(values.warmup); i++) {
    await triage();
    await keysMe();
  }
  await callgrind('-z'); // zero what the warm-up left
  await callgrind('-i on');
  for (let i = 0; i < N; i++) await triage();
  await callgrind('-d triage');
  for (let i = 0; i < N; i++) await keysMe();
  await callgrind('-d keys-me');
  await callgrind('-i off');
  await t.close();
  await db.drop();
  child.disconnect();
  const base = path.join(values.dir, `cg.${process.pid}`);
  const triageIr = totals(`${base}.1`) / N;
  const keysMeIr = totals(`${base}.2`) / N;
  const k = (x: number) => `${Math.round(x / 1000)}k`;
  console.log(
    JSON.stringify({
      engine: values.engine,
      requests: N,
      'POST /triage Ir': k(triageIr),
      'GET /keys/me Ir': k(keysMeIr),
      'triage logic Ir': k(triageIr - keysMeIr),
    }),
  );
}
