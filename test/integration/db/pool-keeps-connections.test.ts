import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, POOL_KEEP_OPEN, type Pool } from '../../../src/db/pool.js';
import { createTestDatabase } from '../../helpers/db.js';

/**
 * Under sparse traffic a pool needs a few connections at moments (two or three statements
 * meeting) and none in between. Closing them in every lull made the next meeting open a new
 * backend on the hot path (docs/operations.md#database-connections); a pool keeps
 * `POOL_KEEP_OPEN` open and lets only the ones above close.
 */
let db: { url: string; drop: () => Promise<void> };
const pools: Pool[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  for (const p of pools) await p.end();
  await db.drop();
});

/** The backend pids of `n` statements run at once on `pool` (each holds its connection a moment). */
async function meeting(pool: Pool, n: number): Promise<Set<number>> {
  const rows = await Promise.all(
    Array.from({ length: n }, () =>
      pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.2)'),
    ),
  );
  return new Set(rows.map((r) => r.rows[0]!.pid));
}

/** Waits until the pool has closed what it will close after an idle spell. */
async function idleSpell(pool: Pool, keeps: number): Promise<void> {
  for (let i = 0; pool.totalCount > keeps && i < 200; i++) await sleep(10);
  await sleep(100); // longer than the idle timeout: anything still to close has had its chance
}

describe('createPool', () => {
  it('keeps its first connections open through idle spells, so meetings reuse the same backends', async () => {
    const pool = createPool(db.url, 10, { idleTimeoutMs: 30 });
    pools.push(pool);
    const first = await meeting(pool, POOL_KEEP_OPEN);
    expect(first.size).toBe(POOL_KEEP_OPEN);
    for (let round = 0; round < 3; round++) {
      await idleSpell(pool, POOL_KEEP_OPEN);
      expect(pool.totalCount).toBe(POOL_KEEP_OPEN);
      expect(await meeting(pool, POOL_KEEP_OPEN)).toEqual(first);
    }
  });

  it('closes the connections above the ones it keeps after they sit idle', async () => {
    const pool = createPool(db.url, 10, { idleTimeoutMs: 30 });
    pools.push(pool);
    // As many backends as statements met (counted by pid: on a busy machine the first to finish
    // may already have sat idle past the timeout by the time the last one ends).
    expect((await meeting(pool, POOL_KEEP_OPEN + 3)).size).toBe(POOL_KEEP_OPEN + 3);
    await idleSpell(pool, POOL_KEEP_OPEN);
    expect(pool.totalCount).toBe(POOL_KEEP_OPEN);
  });

  it('never keeps more than its size', async () => {
    const pool = createPool(db.url, 2, { idleTimeoutMs: 30 });
    pools.push(pool);
    await meeting(pool, 4);
    await idleSpell(pool, 2);
    expect(pool.totalCount).toBe(2);
  });
});
