/**
 * CPU a triage request costs on two checkouts, compared in one run: the app of each checkout
 * (its own `src`, its own `node_modules`) runs in a process of its own, and the two are driven
 * in alternating blocks of `--block` sequential `app.inject` requests, so load from other work
 * on the machine falls on both alike. Per block, `process.cpuUsage()` per request for `POST /api/v1/triage`
 * and, as the baseline of framework + auth, `GET /api/v1/keys/me` with the same key; "triage
 * logic" is the difference. Reported: the median over blocks of each, and the median of the
 * paired differences B − A (each B block against the A block just before it).
 *
 *   npx tsx bench/triage/cpu-ab.ts --a /path/to/checkout-a --b /path/to/checkout-b \
 *     [--engine instant|local] [--blocks 40] [--block 50]
 *
 * A checkout needs its dependencies installed and the helpers `test/helpers/test-app.ts`
 * (`startTestApp`, `signUp`), `test/helpers/triage-setup.ts` (`remoteTriageEnv`) and
 * `bench/lib/bench-db.ts`: every commit since before the consolidation has them (used to bisect; bench/README.md
 * "Triage path, session 8"). The instant fake provider runs in a child process.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

if (process.argv.includes('--serve-fake')) {
  const { startOpenAiFake } = await import('../../test/helpers/fake-providers/openai-fake.js');
  const fake = await startOpenAiFake();
  // The fake keeps every request it saw: forget them now and then, the run is long.
  setInterval(() => (fake.requests.length = 0), 1_000).unref();
  process.on('disconnect', () => process.exit(0));
  process.send!({ url: fake.url });
} else {
  await main();
}

/** A block's CPU per request (µs): the triage requests and the baseline requests. */
interface BlockCpu {
  triage: number;
  floor: number;
}

/** One checkout's app in a process of its own, driven by the parent one block at a time. */
async function serveSide(root: string, fakeUrl: string, engine: string, block: number) {
  const { signUp, startTestApp } = await import(path.join(root, 'test/helpers/test-app.ts'));
  const { remoteTriageEnv } = await import(path.join(root, 'test/helpers/triage-setup.ts'));
  const { createBenchDatabase } = await import(path.join(root, 'bench/lib/bench-db.ts'));
  const db = await createBenchDatabase('bench_cpu_ab');
  const env = engine === 'instant' ? remoteTriageEnv({ url: fakeUrl }) : {};
  const t = await startTestApp({
    databaseUrl: db.url,
    redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    env: { PLANS_FILE: path.join(root, 'bench/auth/unlimited-plans.json'), LOG_LEVEL: 'silent', ...env },
  });
  const { key } = await signUp(t.app, {});
  const headers = { 'x-api-key': key };
  const payload = {
    title: 'Outdated OpenSSL on an internal host',
    severity: 'MEDIUM',
    description: 'OpenSSL 1.1.1 reached end of life',
  };
  const cpu = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  process.on('message', async (m: { run?: boolean; stop?: boolean }) => {
    if (m.stop) {
      await t.close();
      await db.drop();
      process.send!({ stopped: true });
      return;
    }
    let c = cpu();
    for (let i = 0; i < block; i++) {
      const r = await t.app.inject({ method: 'POST', url: '/api/v1/triage', headers, payload });
      if (r.statusCode !== 200) throw new Error(`triage answered ${r.statusCode}: ${r.body}`);
    }
    const triage = (cpu() - c) / block;
    c = cpu();
    for (let i = 0; i < block; i++) await t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers });
    process.send!({ triage, floor: (cpu() - c) / block } satisfies BlockCpu);
  });
  process.send!({ ready: true });
}

async function main() {
  const { values } = parseArgs({
    options: {
      a: { type: 'string' },
      b: { type: 'string' },
      engine: { type: 'string', default: 'instant' },
      blocks: { type: 'string', default: '40' },
      block: { type: 'string', default: '50' },
      side: { type: 'string' },
      fake: { type: 'string' },
    },
  });
  const BLOCK = Number(values.block);
  if (values.side) {
    await serveSide(values.side, values.fake!, values.engine, BLOCK);
    return;
  }
  if (!values.a || !values.b) throw new Error('--a and --b name the two checkouts');
  const BLOCKS = Number(values.blocks);
  const fakeChild = fork(fileURLToPath(import.meta.url), ['--serve-fake'], { execArgv: ['--import', 'tsx'] });
  const fakeUrl = await new Promise<string>((r) =>
    fakeChild.once('message', (m) => r((m as { url: string }).url)),
  );
  const roots = [path.resolve(values.a), path.resolve(values.b)];
  const sides: ChildProcess[] = [];
  for (const root of roots) {
    // Config files are read relative to the working directory: each app runs in its checkout.
    const child = fork(
      fileURLToPath(import.meta.url),
      ['--side', root, '--fake', fakeUrl, '--engine', values.engine, '--block', String(BLOCK)],
      { execArgv: ['--import', 'tsx'], cwd: root },
    );
    await new Promise((r) => child.once('message', r));
    sides.push(child);
  }
  const ask = (i: number, m: object) =>
    new Promise<BlockCpu>((r) => {
      sides[i]!.once('message', (x) => r(x as BlockCpu));
      sides[i]!.send(m);
    });
  const blocks = sides.map(() => ({ triage: [] as number[], floor: [] as number[] }));
  for (let i = 0; i < 6; i++) for (let s = 0; s < 2; s++) await ask(s, { run: true }); // warm-up
  for (let b = 0; b < BLOCKS; b++) {
    for (const s of b % 2 === 0 ? [0, 1] : [1, 0]) {
      const r = await ask(s, { run: true });
      blocks[s]!.triage.push(r.triage);
      blocks[s]!.floor.push(r.floor);
    }
  }
  for (let s = 0; s < 2; s++) await ask(s, { stop: true });
  for (const c of sides) c.disconnect();
  fakeChild.disconnect();
  const median = (xs: number[]) => {
    const s = [...xs].sort((x, y) => x - y);
    return s[Math.floor(s.length / 2)]!;
  };
  const logic = blocks.map((x) => x.triage.map((t, i) => t - x.floor[i]!));
  const rows = roots.map((root, i) => ({
    checkout: `${'ab'[i]}: ${root}`,
    'POST /triage µs': Math.round(median(blocks[i]!.triage)),
    'GET /keys/me µs': Math.round(median(blocks[i]!.floor)),
    'triage logic µs': Math.round(median(logic[i]!)),
  }));
  const paired = logic[1]!.map((x, i) => x - logic[0]![i]!);
  const pairedTriage = blocks[1]!.triage.map((x, i) => x - blocks[0]!.triage[i]!);
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(
    `\nCPU per request (process.cpuUsage of each app's process), engine ${values.engine}, ${BLOCKS} alternating blocks of ${BLOCK}, medians; load average ${load}`,
  );
  console.table(rows);
  console.log(
    `paired B − A: triage logic ${Math.round(median(paired))} µs, POST /triage ${Math.round(median(pairedTriage))} µs a request`,
  );
}
