/**
 * Where one triage request's time goes, in process and one request at a time (no queueing):
 * the app is called through `app.inject` (no sockets between client and server), so each part
 * can be timed on its own:
 *
 * - framework + auth: `GET /api/v1/keys/me` with the same key (routing, key check, metering);
 * - the statement that stores the answer (result, ledger, AI call), timed around `pg`'s query;
 * - the provider call as the service's HTTP client saw it (undici's diagnostics channels), and as
 *   the fake provider measured it (request in to last byte out; it answers at once here);
 * - the rest: building the prompt, counting tokens, routing, the local engine or the answer's
 *   parsing and schema check, the safety policy, the in-house shadow, the response.
 *
 *   npx tsx bench/triage/request-breakdown.ts [--requests 1000]
 *
 * The baseline in the same run is the framework + auth line; the figures explain the HTTP
 * bench's overhead (`http-overhead.ts`), they do not replace it.
 */
import path from 'node:path';
import diagnostics from 'node:diagnostics_channel';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startOpenAiFake } from '../../test/helpers/fake-providers/openai-fake.js';
import { signUp, startTestApp } from '../../test/helpers/test-app.js';
import { remoteTriageEnv } from '../../test/helpers/triage-setup.js';
import { createBenchDatabase } from '../lib/bench-db.js';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '1000' }, vary: { type: 'boolean', default: false } },
});
const N = Number(values.requests);

/** Query times of the statements named `record-triage`, pushed while `capture` is on. */
const statementMs: number[] = [];
let capture = false;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as { query: unknown }).query = function (this: unknown, ...args: unknown[]) {
  const q = args[0] as { name?: string } | undefined;
  const done = args[args.length - 1];
  if (capture && q?.name === 'record-triage' && typeof done === 'function') {
    const started = performance.now();
    args[args.length - 1] = (...r: unknown[]) => {
      statementMs.push(performance.now() - started);
      return (done as (...x: unknown[]) => unknown)(...r);
    };
  }
  return query.apply(this, args);
};

/** The provider calls as the client saw them: undici's request created → its body read whole. */
const providerClientMs: number[] = [];
const started = new WeakMap<object, number>();
diagnostics.subscribe('undici:request:create', (m) => {
  if (capture) started.set((m as { request: object }).request, performance.now());
});
diagnostics.subscribe('undici:request:trailers', (m) => {
  const t = started.get((m as { request: object }).request);
  if (t !== undefined) providerClientMs.push(performance.now() - t);
});

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)]!;
};
const ms = (x: number) => +x.toFixed(3);

const fake = await startOpenAiFake();

/** `--vary`: every request a different description, so no cache keyed by the prompt's text can answer it. */
let sent = 0;
const payload = () => ({
  title: 'Outdated OpenSSL on an internal host',
  severity: 'MEDIUM',
  description: values.vary
    ? `OpenSSL 1.1.1 reached end of life (request ${sent++})`
    : 'OpenSSL 1.1.1 reached end of life',
});
const rows: Record<string, string | number>[] = [];
for (const [engine, env] of [
  ['local engine', {}],
  ['fake provider (answers at once)', remoteTriageEnv(fake)],
] as [string, Record<string, string>][]) {
  const db = await createBenchDatabase('bench_breakdown');
  const t = await startTestApp({
    databaseUrl: db.url,
    redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    env: { PLANS_FILE: path.resolve('bench/auth/unlimited-plans.json'), LOG_LEVEL: 'silent', ...env },
  });
  const { key } = await signUp(t.app, {});
  const triage = () =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/triage',
      headers: { 'x-api-key': key },
      payload: payload(),
    });
  const keysMe = () => t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers: { 'x-api-key': key } });
  for (let i = 0; i < 200; i++) await Promise.all([triage(), keysMe()]); // warm-up

  statementMs.length = 0;
  providerClientMs.length = 0;
  const seen = fake.requests.length;
  const total: number[] = [];
  const floor: number[] = [];
  capture = true;
  for (let i = 0; i < N; i++) {
    let started = performance.now();
    const r = await triage();
    total.push(performance.now() - started);
    if (r.statusCode !== 200) throw new Error(`triage answered ${r.statusCode}: ${r.body}`);
    started = performance.now();
    await keysMe();
    floor.push(performance.now() - started);
  }
  capture = false;
  const served = fake.requests.slice(seen).map((q) => q.servedMs ?? 0);
  const parts = {
    request: median(total),
    frameworkAndAuth: median(floor),
    statement: median(statementMs),
    providerClient: median(providerClientMs),
    providerServed: median(served),
  };
  rows.push({
    engine,
    'request p50': ms(parts.request),
    'framework + auth (GET /keys/me)': ms(parts.frameworkAndAuth),
    'store statement': ms(parts.statement),
    'provider call, client side': ms(parts.providerClient),
    'provider call, fake side': ms(parts.providerServed),
    'rest (triage logic)': ms(
      parts.request - parts.frameworkAndAuth - parts.statement - parts.providerClient,
    ),
  });
  await t.close();
  await db.drop();
}
await fake.close();
console.log(`\none triage request at a time, in process (app.inject), medians of ${N} requests, ms`);
console.table(rows);
