/**
 * Triage at a real provider tier's limits (docs/operations.md#failure-behaviour): `POST /api/v1/triage` at
 * 50, 200 and 500 requests a second against a `web` process on Redis whose providers allow
 * 30,000,000 tokens a minute (and 60,000 requests a minute), both fakes on 127.0.0.1 answering
 * after 50 ms. What must hold: no request waits on the limiter (it would show as latency well
 * above the provider's 50 ms, as answers from the next tier, or as 503 `overloaded`), so p50/p99
 * stay close to the floor: `GET /healthz` on the same server at the same rates, in the same run,
 * and to the same server with the limits lifted (10^9 tokens a minute), the baseline that shows
 * what is the machine's load rather than the limiter.
 *
 * Each attempt is weighed at its prompt's tokens plus the answer budget (800), about 1,000-1,100
 * tokens here: 30,000,000 a minute is about 450-500 requests a second, so 500 rps sits at the
 * limit and part of it may go to the next tier.
 *
 *   npx tsx bench/faults/triage-at-limits.ts [--seconds 5] [--rates 50,200,500]
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createBenchDatabase } from '../lib/bench-db.js';
import { paced } from '../lib/paced-load.js';
import { startOpenAiFake } from '../../test/helpers/fake-providers/openai-fake.js';
import { startAnthropicFake } from '../../test/helpers/fake-providers/anthropic-fake.js';
import { signUpOverHttp, startServerProcess } from '../../test/helpers/server-process.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
const seconds = Number(opt('seconds', '5'));
const rates = opt('rates', '50,200,500').split(',').map(Number);
const PROVIDER_MS = 50;

const slow = [{ kind: 'slow' as const, delayMs: PROVIDER_MS, then: { kind: 'success' as const } }];
const openai = await startOpenAiFake(slow);
const anthropic = await startAnthropicFake(slow);
const dir = mkdtempSync(path.join(tmpdir(), 'bench-limits-'));
/** The triage config with every provider at these limits. */
function configWith(requestsPerMinute: number, tokensPerMinute: number): string {
  const config = JSON.parse(readFileSync('config/triage.json', 'utf8'));
  for (const p of Object.values(config.providers) as {
    requestsPerMinute: number;
    tokensPerMinute: number;
  }[]) {
    p.requestsPerMinute = requestsPerMinute;
    p.tokensPerMinute = tokensPerMinute;
  }
  const file = path.join(dir, `triage-${tokensPerMinute}.json`);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

const body = JSON.stringify({
  title: 'Outdated OpenSSL on an internal host',
  severity: 'MEDIUM',
  description: 'OpenSSL 1.1.1 reached end of life',
});
const rows: Record<string, string | number>[] = [];
// The baseline in the same run: the same server with the limits lifted (10^9 tokens a minute), so
// what the limiter adds at 3·10^7 is the difference between the two, not the machine's load.
for (const [label, tokens, requests] of [
  ['3e7 tokens/min', 30_000_000, 60_000],
  ['limits lifted', 1_000_000_000, 10_000_000],
] as const) {
  const db = await createBenchDatabase('bench_limits');
  const proc = await startServerProcess('web', {
    DATABASE_URL: db.url,
    KEY_PEPPER: 'bench-pepper-'.padEnd(48, 'x'),
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    LOG_LEVEL: 'silent',
    PLANS_FILE: path.resolve('bench/auth/unlimited-plans.json'),
    TRIAGE_CONFIG_FILE: configWith(requests, tokens),
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    ANTHROPIC_API_KEY: 'sk-ant-bench',
    ANTHROPIC_BASE_URL: anthropic.url,
  });
  try {
    const { key } = await signUpOverHttp(proc.url);
    const triage: RequestInit = {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body,
    };
    await paced(`${proc.url}/api/v1/triage`, triage, 50, 2); // warm-up
    for (const rate of rates) {
      const floor = await paced(`${proc.url}/healthz`, {}, rate, seconds);
      rows.push({
        limits: label,
        route: 'GET /healthz (floor)',
        'target rps': rate,
        'reached rps': floor.reached,
        errors: floor.failures,
        'p50 ms': floor.p50,
        'p99 ms': floor.p99,
        'next tier': 0,
        '503 overloaded': 0,
      });
      const models = new Map<string, number>();
      let overloaded = 0;
      const r = await paced(`${proc.url}/api/v1/triage`, triage, rate, seconds, (status, text) => {
        if (status === 200) {
          const model = (JSON.parse(text) as { model: string }).model;
          models.set(model, (models.get(model) ?? 0) + 1);
        } else if (status === 503 && text.includes('"overloaded"')) overloaded++;
      });
      const first = models.get('openai:gpt-4.1-mini') ?? 0;
      rows.push({
        limits: label,
        route: 'POST /api/v1/triage',
        'target rps': rate,
        'reached rps': r.reached,
        errors: r.failures,
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        'next tier': [...models.values()].reduce((a, b) => a + b, 0) - first,
        '503 overloaded': overloaded,
      });
    }
  } finally {
    await proc.stop('SIGTERM');
    await db.drop();
  }
}
console.log(
  `\ntriage at 30,000,000 tokens a minute (web process on Redis, providers answer after ${PROVIDER_MS} ms)`,
);
console.table(rows);
await openai.close();
await anthropic.close();
