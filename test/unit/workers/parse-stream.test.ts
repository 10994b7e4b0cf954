import { createReadStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../../src/parsers/index.js';
import {
  createParserPool,
  parseFileInPool,
  parseStreamInPool,
  type ParserPool,
} from '../../../src/workers/parser-pool.js';

/*
 * A file with no local path (object storage) reaches a parser thread as a stream over a port
 * (src/workers/byte-port.ts): the same findings as parsing the file by path, in order, with
 * progress; a source that fails fails the parse with its error; a broken file is a ParseError.
 */

const file = path.resolve('test/fixtures/scans/nessus/nessus_v_unknown.xml');
let pool: ParserPool;
beforeAll(() => {
  pool = createParserPool({ maxThreads: 1, minThreads: 1 });
});
afterAll(async () => pool.destroy());

describe('parsing a streamed file in the pool', () => {
  it('yields exactly what parsing the file by path yields, with progress', async () => {
    const byPath: Finding[] = [];
    const expected = await parseFileInPool(pool, { path: file, batchSize: 40 }, async (b) => {
      byPath.push(...b);
    });
    const streamed: Finding[] = [];
    const progress: number[] = [];
    const result = await parseStreamInPool(
      pool,
      createReadStream(file, { highWaterMark: 4096 }),
      { batchSize: 40 },
      async (b, info) => {
        streamed.push(...b);
        progress.push(info.bytesRead);
      },
    );
    expect(result).toEqual(expected);
    expect(streamed).toEqual(byPath);
    expect(progress.every((p, i) => p > 0 && p <= result.bytes && (i === 0 || p >= progress[i - 1]!))).toBe(
      true,
    );
  });

  it('fails the parse with the source’s error when the store fails mid-file', async () => {
    const bytes = readFileSync(file);
    async function* failing() {
      yield bytes.subarray(0, 20_000);
      throw Object.assign(new Error('connection reset by the store'), { code: 'ECONNRESET' });
    }
    await expect(parseStreamInPool(pool, failing(), {}, async () => undefined)).rejects.toMatchObject({
      code: 'ECONNRESET',
    });
    // The pool still serves the next file.
    const again = await parseStreamInPool(pool, createReadStream(file), {}, async () => undefined);
    expect(again.count).toBe(296);
  });

  it('reports a broken streamed file as a ParseError with its position', async () => {
    async function* broken() {
      yield Buffer.from('<?xml version="1.0"?>\n<NessusClientData_v2><Report><ReportHost name="a">');
      yield Buffer.from('<ReportItem port="1" severity="2" pluginID="1" pluginName="x"></Report>');
    }
    await expect(parseStreamInPool(pool, broken(), {}, async () => undefined)).rejects.toMatchObject({
      name: 'ParseError',
      code: 'unparseable_scan',
    });
  });
});
