import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testRedisUrl } from '../../helpers/db.js';
import { startServerProcess, type ServerProcess } from '../../helpers/server-process.js';
import { TEST_PEPPER } from '../../helpers/test-app.js';

/**
 * An idle `web` process sleeps (docs/operations.md#metrics): nothing it runs on its own, the
 * metrics' event-loop delay sampling included, wakes it more than a few times a second. Counted,
 * not timed: the voluntary context switches of its main thread over a few seconds with no
 * request sent, each one a sleep and a wake-up. prom-client's default sampling (every 10 ms)
 * gave 91–98 a second.
 */
const IDLE_SECONDS = 3;

/** The voluntary context switches the process's main thread has made so far. */
function wakeUps(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)![1]);
}

let web: ServerProcess;
let drop: () => Promise<void>;

describe.skipIf(process.platform !== 'linux')('an idle web process', () => {
  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    web = await startServerProcess('web', {
      DATABASE_URL: db.url,
      KEY_PEPPER: TEST_PEPPER,
      REDIS_URL: testRedisUrl(),
      HOST: '127.0.0.1',
    });
    // One request, so the pools and caches a request starts are running too.
    expect((await fetch(`${web.url}/healthz`)).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await web?.stop('SIGKILL');
    await drop?.();
  });

  it('wakes up fewer than 30 times a second', async () => {
    const pid = web.child.pid!;
    const before = wakeUps(pid);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const perSecond = (wakeUps(pid) - before) / IDLE_SECONDS;
    expect(perSecond).toBeLessThan(30);
  });
});
