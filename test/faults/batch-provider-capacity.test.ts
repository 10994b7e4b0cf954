import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { testRedisUrl } from '../helpers/db.js';
import { startOpenAiFake } from '../helpers/fake-providers/openai-fake.js';
import type { FakeServer } from '../helpers/fake-providers/fake-server.js';
import { pollBatch, remoteTriageEnv, startTriageTestWorker, triageCounts } from '../helpers/triage-setup.js';
import { DEADLINE_DETAIL } from '../../src/domain/triage/batch-processor.js';
import type { WorkerHandle } from '../../src/jobs/queue-kit.js';

/*
 * docs/triage.md#waiting-for-model-capacity: a batch item whose models are all at their rate
 * limit waits for capacity, no attempt spent, until its batch's deadline; only then does it fail,
 * with `overloaded`. The one provider takes 3 requests per 5-second window, and an item's job
 * spends its 2 runs (200 ms apart, each waiting at most 100 ms for capacity) well inside one
 * window: retrying with backoff alone would fail most items with `internal_error`.
 */
const WINDOW_MS = 5_000;
const PER_WINDOW = 3;
const ITEMS = 12;
const DEADLINE_MS = 60_000;

type Item = { index: number; status: string; result?: { model: string }; error?: unknown };

/** The app with one provider tier taking `perWindow` requests a window, and a triage worker. */
async function startCapacityApp(perWindow: number): Promise<{
  t: TestApp;
  openai: FakeServer;
  close: () => Promise<void>;
}> {
  const openai = await startOpenAiFake();
  const env = remoteTriageEnv(openai);
  const config = JSON.parse(readFileSync(env.TRIAGE_CONFIG_FILE!, 'utf8'));
  config.chain = [config.chain[0]]; // one tier: no other model answers while it is busy
  config.providers = {
    openai: {
      ...config.providers.openai,
      requestsPerMinute: perWindow,
      rateLimitWindowMs: WINDOW_MS,
      maxRetries: 0,
    },
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'batch-capacity-'));
  writeFileSync(path.join(dir, 'triage.json'), JSON.stringify(config));
  const redisUrl = testRedisUrl();
  const t = await startTestApp({
    ...(redisUrl ? { redisUrl } : {}),
    env: {
      ...env,
      TRIAGE_CONFIG_FILE: path.join(dir, 'triage.json'),
      PROVIDER_QUEUE_MAX_WAIT_MS: '100',
      BATCH_ITEM_ATTEMPTS: '2',
      BATCH_ITEM_BACKOFF_MS: '200',
      BATCH_DEADLINE_MS: String(DEADLINE_MS),
    },
  });
  const worker: WorkerHandle = startTriageTestWorker(t, {}, 4);
  return {
    t,
    openai,
    close: async () => {
      await worker.close();
      await t.close();
      await openai.close();
    },
  };
}

/** Accepts a batch of `items` findings no policy answers alone (no CVE): only the model can. */
async function submit(t: TestApp, key: string, items = ITEMS): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/triage/batch',
    headers: { 'x-api-key': key },
    payload: {
      items: Array.from({ length: items }, (_, i) => ({
        title: `Weak TLS cipher #${i}`,
        severity: 'LOW',
        description: 'TLS 1.0 on an internal host',
      })),
    },
  });
  expect(res.statusCode).toBe(202);
  return res.json().batchId;
}

/** The most provider calls that fell in one window. */
/** How long a call may take from the limiter's count (when sent) to the fake's stamp (on arrival). */
const IN_FLIGHT_MS = 1_000;

/**
 * The calls beyond `perWindow` in some window, however the calls are placed: the fake stamps a
 * call when it arrives, the limiter counted it when it sent it, up to {@link IN_FLIGHT_MS} before
 * (a call sent at a window's last millisecond may land in the next). Each call, in arrival order,
 * goes to the earliest window it could have been sent in that has room; 0 when all fit. Without
 * the limiter a burst fills at most two windows' worth and the rest overflow.
 */
function callsOverLimit(calls: ReadonlyArray<{ at: number }>, perWindow: number): number {
  const used = new Map<number, number>();
  let over = 0;
  for (const { at } of [...calls].sort((a, b) => a.at - b.at)) {
    const first = Math.floor((at - IN_FLIGHT_MS) / WINDOW_MS);
    const last = Math.floor(at / WINDOW_MS);
    let placed = false;
    for (let w = first; w <= last && !placed; w++) {
      if ((used.get(w) ?? 0) < perWindow) {
        used.set(w, (used.get(w) ?? 0) + 1);
        placed = true;
      }
    }
    if (!placed) over++;
  }
  return over;
}

describe('a batch larger than the provider capacity of one window', () => {
  let t: TestApp;
  let openai: FakeServer;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ t, openai, close } = await startCapacityApp(PER_WINDOW));
  }, 60_000);
  afterAll(async () => {
    await close?.();
  });

  it(
    'waits for capacity window after window: every item triaged and billed once',
    { timeout: 45_000 },
    async () => {
      const { key, workspaceId } = await signUp(t.app, { plan: 'trial' });
      const before = openai.requests.length;
      const done = await pollBatch(t, key, await submit(t, key), 40_000);

      expect(done).toMatchObject({ status: 'completed', total: ITEMS, completed: ITEMS, failed: 0 });
      for (const item of done.items as Item[]) {
        expect(item).toMatchObject({ status: 'completed', result: { model: 'openai:gpt-4.1-mini' } });
      }
      // One provider call per item, never more in a window than its limit: the items waited.
      const calls = openai.requests.slice(before);
      expect(calls).toHaveLength(ITEMS);
      expect(callsOverLimit(calls, PER_WINDOW)).toBe(0);
      expect(await triageCounts(t, workspaceId)).toMatchObject({
        results: ITEMS,
        calls: ITEMS,
        used: ITEMS,
        reserved: 0,
        reservations: 0,
      });
    },
  );

  it(
    'fails the items still waiting at the batch deadline with overloaded, and bills only the answered',
    { timeout: 45_000 },
    async () => {
      const { key, workspaceId } = await signUp(t.app, { plan: 'trial' });
      const id = await submit(t, key);
      // Some items answered and the rest waiting for the next window: then the deadline passes.
      const until = Date.now() + 20_000;
      for (;;) {
        const res = await t.app.inject({
          method: 'GET',
          url: `/api/v1/triage/batch/${id}`,
          headers: { 'x-api-key': key },
        });
        if (res.json().completed > 0 || Date.now() > until) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      t.clock.advance(DEADLINE_MS);
      const done = await pollBatch(t, key, id, 30_000);

      expect(done.status).toBe('partial');
      expect(done.completed).toBeGreaterThan(0);
      expect(done.failed).toBeGreaterThan(0);
      expect(done.completed + done.failed).toBe(ITEMS);
      const failed = (done.items as Item[]).filter((i) => i.status === 'failed');
      expect(failed).toHaveLength(done.failed);
      for (const item of failed) {
        expect(item.error).toEqual({ code: 'overloaded', detail: DEADLINE_DETAIL });
      }
      expect(await triageCounts(t, workspaceId)).toMatchObject({
        results: done.completed,
        calls: done.completed,
        used: done.completed,
        reserved: 0,
        reservations: 0,
      });
    },
  );
});

describe('a 1,000-item batch against a provider whose limit is a tenth of it', () => {
  const BIG = 1_000;
  let app: Awaited<ReturnType<typeof startCapacityApp>> | undefined;
  beforeAll(async () => {
    app = await startCapacityApp(BIG / 10);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it('answers every item, window after window, each billed once', { timeout: 240_000 }, async () => {
    const { t, openai } = app!;
    const { key, workspaceId } = await signUp(t.app, { plan: 'trial' });
    const before = openai.requests.length;
    const done = await pollBatch(t, key, await submit(t, key, BIG), 220_000);

    expect(done).toMatchObject({ status: 'completed', total: BIG, completed: BIG, failed: 0 });
    const calls = openai.requests.slice(before);
    expect(calls).toHaveLength(BIG);
    // Never more in a window than its limit, each call counted when it may have been sent (without
    // the limiter all 1,000 calls would land in one or two windows).
    expect(callsOverLimit(calls, BIG / 10)).toBe(0);
    expect(await triageCounts(t, workspaceId)).toMatchObject({
      results: BIG,
      calls: BIG,
      used: BIG,
      reserved: 0,
      reservations: 0,
    });
  });
});
