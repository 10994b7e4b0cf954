/**
 * The provider client's HTTP transport, compared in one run: undici's `Pool` (`pooled-post.ts`,
 * what the service uses), the `node:http` keep-alive client it replaced (kept here, in
 * `bench/triage/node-http-fetch.ts`, as the baseline; it answers with a `Response`, as it did)
 * and global `fetch`. Each call is the real
 * `postJson` (a Chat Completions body of the usual size, its answer parsed) against the fake
 * OpenAI server in a child process (so the server does not share this event loop), which
 * answers at once.
 *
 * Rounds alternate the clients (A B C A B C …) so a change in the machine's load hits all of
 * them. Reported per client: p50 and p99 of one call, sequential; the client process's CPU per
 * call (user + system, µs), sequential and with 32 calls in flight; calls a second at 32.
 *
 *   npx tsx bench/triage/provider-client.ts [--calls 2000] [--rounds 3]
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { postJson, type PostJsonOptions } from '../../src/domain/triage-engine/providers/http-client.js';
import { closeProviderPools } from '../../src/domain/triage-engine/providers/pooled-post.js';
import { nodeHttpFetch } from './node-http-fetch.js';

if (process.argv.includes('--serve')) {
  const { startOpenAiFake } = await import('../../test/helpers/fake-providers/openai-fake.js');
  const fake = await startOpenAiFake();
  process.send!({ url: fake.url });
  process.on('disconnect', () => void fake.close().then(() => process.exit(0)));
} else {
  const { values } = parseArgs({
    options: { calls: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } },
  });
  const CALLS = Number(values.calls);
  const ROUNDS = Number(values.rounds);

  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { execArgv: ['--import', 'tsx'] });
  const url = await new Promise<string>((r) => child.once('message', (m) => r((m as { url: string }).url)));

  const body = {
    model: 'gpt-4.1-mini',
    max_tokens: 400,
    temperature: 0,
    messages: [
      { role: 'system', content: 'x'.repeat(900) },
      { role: 'user', content: 'y'.repeat(600) },
    ],
    response_format: { type: 'json_schema', json_schema: { name: 'triage', strict: true, schema: {} } },
  };
  const clients: [string, Pick<PostJsonOptions, 'fetchImpl'>][] = [
    ['undici Pool (pooled-post.ts)', {}],
    ['node:http keep-alive (old keep-alive-fetch.ts)', { fetchImpl: nodeHttpFetch }],
    ['global fetch', { fetchImpl: fetch }],
  ];
  const call = (client: Pick<PostJsonOptions, 'fetchImpl'>) =>
    postJson({
      url: `${url}/v1/chat/completions`,
      headers: { authorization: 'Bearer sk-bench' },
      body,
      timeoutMs: 10_000,
      maxRetries: 0,
      secrets: ['sk-bench'],
      ...client,
    }).then((r) => {
      if (!r.ok) throw new Error(`call failed: ${r.error.message}`);
    });
  const cpuUs = (since: NodeJS.CpuUsage) => {
    const u = process.cpuUsage(since);
    return u.user + u.system;
  };

  const results = new Map<
    string,
    { p50: number[]; p99: number[]; cpuSeq: number[]; cpu32: number[]; rps32: number[] }
  >();
  for (const [name, f] of clients) {
    results.set(name, { p50: [], p99: [], cpuSeq: [], cpu32: [], rps32: [] });
    for (let i = 0; i < 300; i++) await call(f); // warm-up: connections open, code optimised
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, f] of clients) {
      const r = results.get(name)!;
      const times: number[] = [];
      let cpu = process.cpuUsage();
      for (let i = 0; i < CALLS; i++) {
        const t = performance.now();
        await call(f);
        times.push(performance.now() - t);
      }
      r.cpuSeq.push(cpuUs(cpu) / CALLS);
      times.sort((a, b) => a - b);
      r.p50.push(times[Math.floor(CALLS / 2)]! * 1000);
      r.p99.push(times[Math.floor(CALLS * 0.99)]! * 1000);
      // 32 in flight: each worker loops until the calls are spent.
      let left = CALLS;
      cpu = process.cpuUsage();
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (left-- > 0) await call(f);
        }),
      );
      r.rps32.push(CALLS / ((performance.now() - started) / 1000));
      r.cpu32.push(cpuUs(cpu) / CALLS);
    }
  }
  const fmt = (xs: number[]) => xs.map((x) => Math.round(x)).join(' / ');
  console.log(`\nprovider client, ${CALLS} calls a round, ${ROUNDS} rounds alternated (figures per round)`);
  console.table(
    [...results].map(([client, r]) => ({
      client,
      'p50 µs (seq)': fmt(r.p50),
      'p99 µs (seq)': fmt(r.p99),
      'CPU µs/call (seq)': fmt(r.cpuSeq),
      'CPU µs/call (32)': fmt(r.cpu32),
      'calls/s (32)': fmt(r.rps32),
    })),
  );
  await closeProviderPools();
  child.disconnect();
}
