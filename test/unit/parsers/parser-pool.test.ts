import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../../src/parsers/index.js';
import { createParserPool, parseFileInPool, type ParserPool } from '../../../src/workers/parser-pool.js';
import { fixturePath } from './fixture-paths.js';

let pool: ParserPool;
let dir: string;

beforeAll(async () => {
  pool = createParserPool({ maxThreads: 2, minThreads: 1 });
  dir = await mkdtemp(join(tmpdir(), 'parser-pool-'));
});

afterAll(async () => {
  await pool.destroy();
  await rm(dir, { recursive: true, force: true });
});

describe('parser thread pool', () => {
  it('parses a fixture in a worker thread and delivers every batch in order', async () => {
    const batches: Finding[][] = [];
    const progress: number[] = [];
    const result = await parseFileInPool(
      pool,
      { path: fixturePath('scans/nessus/nessus_v_unknown.xml'), batchSize: 50 },
      async (batch, info) => {
        await new Promise((r) => setTimeout(r, 5));
        batches.push(batch);
        progress.push(info.bytesRead);
      },
    );
    expect(result).toMatchObject({ format: 'nessus', count: 296 });
    // Every batch says how far into the file the thread had read: never backwards, never past the end.
    expect(progress.every((b, i) => b > 0 && b <= result.bytes && (i === 0 || b >= progress[i - 1]!))).toBe(
      true,
    );
    expect(batches.map((b) => b.length)).toEqual([50, 50, 50, 50, 50, 46]);
    expect(batches.flat().map((f) => f.recordIndex)).toEqual(Array.from({ length: 296 }, (_, i) => i));
  });

  it('fails a hostile file cleanly and keeps serving the next task', async () => {
    const hostile = join(dir, 'laughs.nessus');
    await writeFile(
      hostile,
      '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><NessusClientData_v2>&b;</NessusClientData_v2>',
    );
    const failure = await parseFileInPool(pool, { path: hostile }, async () => undefined).catch(
      (err: unknown) => err,
    );
    // Matched by name and code, as across any thread boundary.
    expect(failure).toMatchObject({ name: 'ParseError', code: 'unparseable_scan', line: 1 });
    expect((failure as Error).message).toMatch(/entity declarations are refused/);

    const unsupported = join(dir, 'notes.txt');
    await writeFile(unsupported, 'just some text');
    await expect(parseFileInPool(pool, { path: unsupported }, async () => undefined)).rejects.toMatchObject({
      name: 'ParseError',
      code: 'unsupported_format',
    });

    let count = 0;
    const result = await parseFileInPool(
      pool,
      { path: fixturePath('scans/sarif/flawfinder.sarif') },
      async (batch) => {
        count += batch.length;
      },
    );
    expect(result.count).toBe(54);
    expect(count).toBe(54);
  });

  it('stops the worker and rethrows when the consumer fails', async () => {
    let calls = 0;
    const err = await parseFileInPool(
      pool,
      { path: fixturePath('scans/qualys/Qualys_Sample_Report.xml'), batchSize: 10 },
      async () => {
        calls++;
        if (calls === 2) throw new Error('database down');
      },
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ message: 'database down' });
    // Batches beyond the failing one are not delivered (301 findings would be 31 batches).
    expect(calls).toBe(2);
  });

  it('starts no thread until a file is parsed, and ends it once idle for its timeout', async () => {
    // docs/operations.md#memory-of-a-worker: a worker that is not parsing holds no parser thread.
    const lazy = createParserPool({ maxThreads: 1, idleTimeoutMs: 300 });
    try {
      await new Promise((r) => setTimeout(r, 200));
      expect(lazy.threads.length).toBe(0);
      const result = await parseFileInPool(
        lazy,
        { path: fixturePath('scans/nessus/nessus_v_unknown.xml') },
        async () => undefined,
      );
      expect(result.count).toBe(296);
      expect(lazy.threads.length).toBe(1);
      for (let i = 0; i < 50 && lazy.threads.length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(lazy.threads.length).toBe(0);
    } finally {
      await lazy.destroy();
    }
  });
});
