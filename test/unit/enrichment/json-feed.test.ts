import { PassThrough, Readable } from 'node:stream';
import { createGunzip, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  readJsonFeed,
  type JsonFeedEvent,
  type JsonFeedOptions,
} from '../../../src/domain/enrichment/json-feed.js';

async function events(
  text: string | Buffer,
  options: JsonFeedOptions,
): Promise<{ events: JsonFeedEvent[]; sawItems: boolean }> {
  const gzip = Buffer.isBuffer(text);
  const body = Readable.from([Buffer.isBuffer(text) ? text : Buffer.from(text)]);
  const seen: JsonFeedEvent[] = [];
  const summary = await readJsonFeed(
    { body, decode: gzip ? createGunzip() : new PassThrough(), gzip },
    options,
    (e) => {
      seen.push(e);
    },
  );
  return { events: seen, sawItems: summary.sawItems };
}

const KEV = { fields: ['catalogVersion', 'count'], itemsKey: 'vulnerabilities' } as const;

describe('readJsonFeed', () => {
  it('reports header fields and each entry in document order, skipping other keys', async () => {
    const doc = {
      title: 'x',
      catalogVersion: '2025.08.25',
      nested: { catalogVersion: 'not me', vulnerabilities: [1] },
      count: 2,
      vulnerabilities: [{ cveID: 'CVE-1', n: [1, { a: null }] }, 'odd', { cveID: 'CVE-2' }],
      after: [1, 2],
    };
    expect(await events(JSON.stringify(doc), KEV)).toEqual({
      sawItems: true,
      events: [
        { kind: 'field', key: 'catalogVersion', value: '2025.08.25' },
        { kind: 'field', key: 'count', value: 2 },
        { kind: 'item', index: 0, value: { cveID: 'CVE-1', n: [1, { a: null }] } },
        { kind: 'item', index: 1, value: 'odd' },
        { kind: 'item', index: 2, value: { cveID: 'CVE-2' } },
      ],
    });
  });

  it('reads gzip through the decode stage', async () => {
    const { events: seen } = await events(gzipSync(JSON.stringify({ count: 1, vulnerabilities: [{}] })), KEV);
    expect(seen).toEqual([
      { kind: 'field', key: 'count', value: 1 },
      { kind: 'item', index: 0, value: {} },
    ]);
  });

  it('assembles object-valued fields and tells whether the entry array was there', async () => {
    expect(await events('{"catalogVersion": {"a": [1]}, "vulnerabilities": []}', KEV)).toEqual({
      sawItems: true,
      events: [{ kind: 'field', key: 'catalogVersion', value: { a: [1] } }],
    });
    expect((await events('{"count": 0}', KEV)).sawItems).toBe(false);
  });

  it('leaves skipped keys out of assembled entries, at the given depth only', async () => {
    const doc = {
      vulnerabilities: [
        {
          references: 'kept at depth 1',
          cve: {
            id: 'CVE-1',
            references: [{ url: 'x', tags: [[1], {}] }],
            descriptions: 'text',
            metrics: { references: 1 },
          },
        },
        { cve: { references: {}, id: 'CVE-2' } },
      ],
    };
    const { events: seen } = await events(JSON.stringify(doc), {
      fields: [],
      itemsKey: 'vulnerabilities',
      skipInItems: { depth: 2, keys: new Set(['references', 'descriptions']) },
    });
    expect(seen).toEqual([
      {
        kind: 'item',
        index: 0,
        value: { references: 'kept at depth 1', cve: { id: 'CVE-1', metrics: { references: 1 } } },
      },
      { kind: 'item', index: 1, value: { cve: { id: 'CVE-2' } } },
    ]);
  });

  it('skips a leading byte-order mark and copes with multi-byte characters split across chunks', async () => {
    const bytes = Buffer.from('\ufeff{"catalogVersion": "é€𝄞", "vulnerabilities": ["ü"]}');
    const chunks = [...bytes].map((b) => Buffer.from([b]));
    const seen: JsonFeedEvent[] = [];
    await readJsonFeed({ body: Readable.from(chunks), decode: new PassThrough(), gzip: false }, KEV, (e) => {
      seen.push(e);
    });
    expect(seen).toEqual([
      { kind: 'field', key: 'catalogVersion', value: 'é€𝄞' },
      { kind: 'item', index: 0, value: 'ü' },
    ]);
  });

  it.each([
    ['[1, 2]', 'expected a JSON object at the top level'],
    ['{"vulnerabilities": {"a": 1}}', '"vulnerabilities" is not an array'],
    ['{"vulnerabilities": [1, 2', 'Parser cannot parse input'],
    ['{"vulnerabilities": [1, ', 'Parser has expected a value'],
    ['{"a": 1} {"b": 2}', 'Parser cannot parse input: unexpected characters'],
  ])('rejects %s', async (text, message) => {
    await expect(events(text, KEV)).rejects.toThrow(message);
  });

  it('rejects with the handler error, not a stream abort', async () => {
    const body = Readable.from([Buffer.from(JSON.stringify({ vulnerabilities: [1, 2, 3] }))]);
    await expect(
      readJsonFeed({ body, decode: new PassThrough(), gzip: false }, KEV, (e) => {
        if (e.kind === 'item' && e.index === 1) throw new Error('bad entry 1');
      }),
    ).rejects.toThrow('bad entry 1');
  });
});
