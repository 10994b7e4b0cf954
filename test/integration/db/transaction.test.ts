import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, withTransaction, type Pool } from '../../../src/db/pool.js';
import { sql } from '../../../src/db/sql.js';
import { createTestDatabase } from '../../helpers/db.js';

let db: { url: string; drop: () => Promise<void> };
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, 3);
  await pool.query('CREATE TABLE t (v int PRIMARY KEY)');
});

afterAll(async () => {
  await pool.end();
  await db.drop();
});

async function values(): Promise<number[]> {
  const { rows } = await pool.query<{ v: number }>('SELECT v FROM t ORDER BY v');
  return rows.map((r) => r.v);
}

describe('withTransaction', () => {
  it('commits what the function wrote and returns its result', async () => {
    await pool.query('TRUNCATE t');
    const out = await withTransaction(pool, async (tx) => {
      await tx.query(sql`INSERT INTO t VALUES (${1}), (${2})`);
      return 'done';
    });
    expect(out).toBe('done');
    expect(await values()).toEqual([1, 2]);
  });

  it('rolls back everything and rethrows the error when the function throws', async () => {
    await pool.query('TRUNCATE t');
    const boom = new Error('boom');
    await expect(
      withTransaction(pool, async (tx) => {
        await tx.query(sql`INSERT INTO t VALUES (${1})`);
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await values()).toEqual([]);
  });

  it('releases its client after a commit, a thrown error and a failed statement alike', async () => {
    for (let i = 0; i < 10; i++) {
      await withTransaction(pool, async (tx) => tx.query('SELECT 1'));
      await withTransaction(pool, async () => Promise.reject(new Error('x'))).catch(() => undefined);
      await withTransaction(pool, async (tx) => tx.query('SELECT * FROM missing_table')).catch(
        () => undefined,
      );
    }
    expect(pool.totalCount).toBeLessThanOrEqual(3);
    expect(pool.idleCount).toBe(pool.totalCount);
    expect(pool.waitingCount).toBe(0);
  });

  it('runs on a client the caller owns without releasing it, and rolls back on it', async () => {
    await pool.query('TRUNCATE t');
    const client = await pool.connect();
    try {
      await withTransaction(client, async (tx) => {
        expect(tx).toBe(client);
        await tx.query(sql`INSERT INTO t VALUES (${1})`);
      });
      await expect(
        withTransaction(client, async (tx) => {
          await tx.query(sql`INSERT INTO t VALUES (${2})`);
          throw new Error('undo');
        }),
      ).rejects.toThrow('undo');
      // Still usable, and out of any transaction: what it writes now is visible at once.
      await client.query(sql`INSERT INTO t VALUES (${9})`);
      expect(await values()).toEqual([1, 9]);
      await client.query(sql`DELETE FROM t WHERE v = ${9}`);
    } finally {
      client.release();
    }
    expect(await values()).toEqual([1]);
  });

  it('makes a nested call a savepoint: the inner one rolls back alone', async () => {
    await pool.query('TRUNCATE t');
    await withTransaction(pool, async (tx) => {
      await tx.query(sql`INSERT INTO t VALUES (${1})`);
      await withTransaction(tx, async (inner) => {
        await inner.query(sql`INSERT INTO t VALUES (${2})`);
        throw new Error('inner');
      }).catch(() => undefined);
      await withTransaction(tx, async (inner) => inner.query(sql`INSERT INTO t VALUES (${3})`));
    });
    expect(await values()).toEqual([1, 3]);
  });

  it('rolls back the inner savepoint with the outer transaction', async () => {
    await pool.query('TRUNCATE t');
    await expect(
      withTransaction(pool, async (tx) => {
        await withTransaction(tx, async (inner) => inner.query(sql`INSERT INTO t VALUES (${1})`));
        throw new Error('outer');
      }),
    ).rejects.toThrow('outer');
    expect(await values()).toEqual([]);
  });

  it('sends a prelude with BEGIN and hands its results to the function', async () => {
    await pool.query('TRUNCATE t');
    await pool.query('INSERT INTO t VALUES (1), (2)');
    const client = await pool.connect();
    try {
      const seen = await withTransaction(
        client,
        async (tx, prelude) => {
          const { rows } = await tx.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
          return { setting: rows[0]!.synchronous_commit, counts: prelude.map((r) => r.rowCount) };
        },
        { prelude: 'SET LOCAL synchronous_commit = off; UPDATE t SET v = v + 10 WHERE v > 1' },
      );
      expect(seen).toEqual({ setting: 'off', counts: [null, 1] });
      // SET LOCAL ended with the transaction.
      const { rows } = await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
      expect(rows[0]!.synchronous_commit).toBe('on');
    } finally {
      client.release();
    }
    expect(await values()).toEqual([1, 12]);
  });

  it('rolls back the prelude with the function, and a failed prelude before the function runs', async () => {
    await pool.query('TRUNCATE t');
    await expect(
      withTransaction(pool, async () => Promise.reject(new Error('undo')), {
        prelude: 'INSERT INTO t VALUES (1)',
      }),
    ).rejects.toThrow('undo');
    let ran = false;
    await expect(
      withTransaction(
        pool,
        async () => {
          ran = true;
        },
        { prelude: 'INSERT INTO t VALUES (2); SELECT * FROM missing_table' },
      ),
    ).rejects.toThrow(/missing_table/);
    expect(ran).toBe(false);
    expect(await values()).toEqual([]);
    // The client went back to the pool out of any transaction.
    expect(pool.idleCount).toBe(pool.totalCount);
    await withTransaction(pool, async (tx) => tx.query(sql`INSERT INTO t VALUES (${3})`));
    expect(await values()).toEqual([3]);
  });

  it('sends a prelude after the SAVEPOINT of a nested call', async () => {
    await pool.query('TRUNCATE t');
    await withTransaction(pool, async (tx) => {
      await tx.query(sql`INSERT INTO t VALUES (${1})`);
      await withTransaction(tx, async () => Promise.reject(new Error('inner')), {
        prelude: 'INSERT INTO t VALUES (2)',
      }).catch(() => undefined);
      await withTransaction(tx, async () => undefined, { prelude: 'INSERT INTO t VALUES (3)' });
    });
    expect(await values()).toEqual([1, 3]);
  });
});
