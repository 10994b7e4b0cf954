import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeOrigin, openSource, sourceFromArgument } from '../../../src/domain/enrichment/source.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'enrichment-source-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function readAll(file: string): Promise<{ text: string; gzip: boolean }> {
  const opened = await openSource({ file });
  let text = '';
  await pipeline(
    opened.body,
    opened.decode,
    new Writable({
      write(chunk: Buffer, _enc, done) {
        text += chunk.toString();
        done();
      },
    }),
  );
  return { text, gzip: opened.gzip };
}

describe('describeOrigin', () => {
  it.each([
    [
      { url: 'https://user:secret@feeds.example.org/epss/current.csv.gz?token=abc#x' },
      'https://feeds.example.org/epss/current.csv.gz',
    ],
    [{ url: 'http://127.0.0.1:8080/kev.json' }, 'http://127.0.0.1:8080/kev.json'],
    [{ url: 'file:///var/feeds/kev.json' }, 'kev.json'],
    [{ url: 'not a url' }, '(invalid URL)'],
    [{ file: '/var/lib/feeds/nvdcve-2.0-modified.json.gz' }, 'nvdcve-2.0-modified.json.gz'],
    [{ file: 'relative/epss.csv' }, 'epss.csv'],
  ])('%j → %s', (source, origin) => {
    expect(describeOrigin(source)).toBe(origin);
  });
});

describe('sourceFromArgument', () => {
  it.each([
    ['https://www.cisa.gov/kev.json', { url: 'https://www.cisa.gov/kev.json' }],
    ['HTTP://127.0.0.1/x', { url: 'HTTP://127.0.0.1/x' }],
    ['file:///tmp/x.json', { url: 'file:///tmp/x.json' }],
    ['/tmp/x.json', { file: '/tmp/x.json' }],
    ['data/https-feed.csv', { file: 'data/https-feed.csv' }],
  ])('%s', (arg, source) => {
    expect(sourceFromArgument(arg)).toEqual(source);
  });
});

describe('openSource', () => {
  it('gunzips content that starts with 1f 8b, whatever the name', async () => {
    const file = path.join(dir, 'plain-name.csv');
    await writeFile(file, gzipSync('cve,epss,percentile\n'));
    expect(await readAll(file)).toEqual({ text: 'cve,epss,percentile\n', gzip: true });
  });

  it('passes other content through, even when named .gz', async () => {
    const file = path.join(dir, 'not-really.csv.gz');
    await writeFile(file, 'cve,epss,percentile\n');
    expect(await readAll(file)).toEqual({ text: 'cve,epss,percentile\n', gzip: false });
  });

  it('copes with files shorter than the magic', async () => {
    const empty = path.join(dir, 'empty');
    await writeFile(empty, '');
    expect(await readAll(empty)).toEqual({ text: '', gzip: false });
    const one = path.join(dir, 'one');
    await writeFile(one, Buffer.from([0x1f]));
    expect(await readAll(one)).toEqual({ text: '\u001f', gzip: false });
  });

  it('rejects a missing file with its errno code', async () => {
    await expect(openSource({ file: path.join(dir, 'missing') })).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('rejects a URL with another scheme', async () => {
    await expect(openSource({ url: 'ftp://example.org/x' })).rejects.toMatchObject({
      code: 'invalid_source',
      message: 'unsupported URL scheme ftp:',
    });
  });

  it('reports a refused connection as source_unavailable', async () => {
    // A port that was just free: listen on an ephemeral one, then close it.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    await expect(openSource({ url: `http://127.0.0.1:${port}/kev.json` })).rejects.toMatchObject({
      code: 'source_unavailable',
      message: 'download failed (ECONNREFUSED)',
    });
  });
});
