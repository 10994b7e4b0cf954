/**
 * CPU a triage request costs, two checkouts in ONE process: the app of each checkout (its own
 * `src`, its own `node_modules`) is built side by side and the two are driven in alternating
 * blocks of `--block` sequential `app.inject` requests, so load from other work on the machine
 * falls on both alike. Per block, `process.cpuUsage()` per request for `POST /api/v1/triage`
 * and, as the baseline of framework + auth, `GET /api/v1/keys/me` with the same key; "triage
 * logic" is the difference. Reported: the median over blocks of each, and the median of the
 * paired differences B − A (each B block against the A block just before it).
 *
 *   npx tsx bench/triage/cpu-ab.ts --a /path/to/checkout-a --b /path/to/checkout-b \
 *     [--engine instant|local] [--blocks 40] [--block 50]
 *
 * A checkout needs its dependencies installed and the helpers `test/helpers/test-app.ts`
 * (`startTestApp`, `signUp`), `test/helpers/triage-setup.ts` (`remoteTriageEnv`) and
 * `bench/lib/bench-db.ts`: every commit since before issue 10 has them (used to bisect; bench/README.md
 * "Triage path, session 8"). The instant fake provider runs in a child process.
 */
import { fork } from 'node:child_process';
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

interface Side {
  name: string;
  triage(): Promise<{ statusCode: number; body: string }>;
  keysMe(): Promise<unknown>;
  close(): Promise<void>;
}

async function main() {
  const { values } = parseArgs({
    options: {
      a: { type: 'string' },
      b: { type: 'string' },
      engine: { type: 'string', default: 'instant' },
      blocks: { type: 'string', default: '40' },
      block: { type: 'string', default: '50' },
    },
  });
  if (!values.a || !values.b) throw new Error('--a and --b name the two checkouts');
  const BLOCKS = Number(values.blocks);
  const BLOCK = Number(values.block);
  const child = fork(fileURLToPath(import.meta.url), ['--serve-fake'], { execArgv: ['--import', 'tsx'] });
  const fakeUrl = await new Promise<string>((r) =>
    child.once('message', (m) => r((m as { url: string }).url)),
  );
  const payload = {
    title: 'Outdated OpenSSL on an internal host',
    severity: 'MEDIUM',
    description: 'OpenSSL 1.1.1 reached end of life',
  };

  async function side(dir: string, name: string): Promise<Side> {
    const root = path.resolve(dir);
    const { signUp, startTestApp } = await import(path.join(root, 'test/helpers/test-app.ts'));
    const { remoteTriageEnv } = await import(path.join(root, 'test/helpers/triage-setup.ts'));
    const { createBenchDatabase } = await import(path.join(root, 'bench/lib/bench-db.ts'));
    const db = await createBenchDatabase(`bench_cpu_ab_${name}`);
    // Config files are read relative to the working directory: build each app from its checkout.
    const cwd = process.cwd();
    process.chdir(root);
    const env = values.engine === 'instant' ? remoteTriageEnv({ url: fakeUrl }) : {};
    const t = await startTestApp({
      databaseUrl: db.url,
      redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
      env: { PLANS_FILE: path.join(root, 'bench/auth/unlimited-plans.json'), LOG_LEVEL: 'silent', ...env },
    });
    process.chdir(cwd);
    const { key } = await signUp(t.app, {});
    const headers = { 'x-api-key': key };
    return {
      name,
      triage: () => t.app.inject({ method: 'POST', url: '/api/v1/triage', headers, payload }),
      keysMe: () => t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers }),
      async close() {
        await t.close();
        await db.drop();
      },
    };
  }

  const sides = [await side(values.a, 'a'), await side(values.b, 'b')];
  const cpu = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const blocks = sides.map(() => ({ triage: [] as number[], floor: [] as number[] }));
  async function run(s: Side, into: { triage: number[]; floor: number[] } | null) {
    let c = cpu();
    for (let i = 0; i < BLOCK; i++) {
      const r = await s.triage();
      if (r.statusCode !== 200) throw new Error(`${s.name}: triage answered ${r.statusCode}: ${r.body}`);
    }
    const t = (cpu() - c) / BLOCK;
    c = cpu();
    for (let i = 0; i < BLOCK; i++) await s.keysMe();
    const f = (cpu() - c) / BLOCK;
    into?.triage.push(t);
    into?.floor.push(f);
  }
  for (let i = 0; i < 6; i++) for (const s of sides) await run(s, null); // warm-up
  for (let b = 0; b < BLOCKS; b++) {
    // Alternate which side goes first, so neither always follows the other's garbage.
    const order = b % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) await run(sides[i]!, blocks[i]!);
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((x, y) => x - y);
    return s[Math.floor(s.length / 2)]!;
  };
  const logic = blocks.map((x) => x.triage.map((t, i) => t - x.floor[i]!));
  const rows = sides.map((s, i) => ({
    checkout: `${s.name}: ${values[s.name as 'a' | 'b']}`,
    'POST /triage µs': Math.round(median(blocks[i]!.triage)),
    'GET /keys/me µs': Math.round(median(blocks[i]!.floor)),
    'triage logic µs': Math.round(median(logic[i]!)),
  }));
  const paired = logic[1]!.map((x, i) => x - logic[0]![i]!);
  const pairedTriage = blocks[1]!.triage.map((x, i) => x - blocks[0]!.triage[i]!);
  for (const s of sides) await s.close();
  child.disconnect();
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(
    `\nCPU per request in one process (process.cpuUsage), engine ${values.engine}, ${BLOCKS} blocks of ${BLOCK}, medians; load average ${load}`,
  );
  console.table(rows);
  console.log(
    `paired B − A: triage logic ${Math.round(median(paired))} µs, POST /triage ${Math.round(median(pairedTriage))} µs a request`,
  );
}
