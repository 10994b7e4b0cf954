import { createReadStream } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemDocument } from '../../../test/helpers/problem.js';
import { signUp } from '../../../test/helpers/test-app.js';
import { listenOnFreePort, startScanApp, type ScanTestApp } from '../../../test/helpers/scan-app.js';
import { startTriageTestWorker } from '../../../test/helpers/triage-setup.js';
import {
  collectAll,
  createVulnTriageClient,
  paginate,
  unwrap,
  uploadScan,
  VulnTriageError,
  waitForBatch,
  waitForScan,
  type VulnTriageClient,
} from '../src/index.js';

/*
 * The SDK against the real app over real HTTP: typed calls, refusals as errors carrying the
 * problem document, streamed uploads with idempotency keys, waiting, and paging.
 */

const FIXTURE = path.resolve('test/fixtures/parsers/nessus-edge.nessus');

let t: ScanTestApp;
let baseUrl: string;
let key: string;
let client: VulnTriageClient;

beforeAll(async () => {
  t = await startScanApp();
  baseUrl = `http://127.0.0.1:${await listenOnFreePort(t)}`;
  key = (await signUp(t.app, { plan: 'trial' })).key;
  client = createVulnTriageClient({ baseUrl, apiKey: key, retry: { attempts: 2, baseDelayMs: 10 } });
});
afterAll(async () => {
  await t?.close();
});

describe('typed calls', () => {
  it('reads the key it calls with', async () => {
    const me = unwrap(await client.GET('/api/v1/keys/me'));
    expect(me.scopes).toEqual(expect.arrayContaining(['scans:write']));
  });

  it('throws a refusal as a VulnTriageError carrying the whole problem document', async () => {
    const stranger = createVulnTriageClient({ baseUrl, apiKey: 'svc_not-a-key' });
    const error = await stranger
      .GET('/api/v1/cases')
      .then((r) => unwrap(r))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VulnTriageError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_api_key', exhausted: false });
    expect((error as VulnTriageError).problem).toEqual(
      problemDocument(401, 'invalid_api_key', 'Invalid API key', 'The API key is not valid.'),
    );
    expect((error as VulnTriageError).message).toMatch(
      /^The API key is not valid\. \[401 invalid_api_key\]\n {2}request id: \S+$/,
    );
  });

  it('keeps a path prefix of the base URL', async () => {
    const prefixed = createVulnTriageClient({ baseUrl: `${baseUrl}/nothing-here/`, apiKey: key });
    const res = await prefixed.GET('/api/v1/keys/me');
    expect(res.response.url).toBe(`${baseUrl}/nothing-here/api/v1/keys/me`);
    expect(res.response.status).toBe(404);
  });

  it('rejects a wrong argument at compile time', () => {
    // The generated types know the sorts the API offers: this line must not typecheck.
    // @ts-expect-error "severity" is not a sort of GET /api/v1/cases
    const wrong = () => client.GET('/api/v1/cases', { params: { query: { sort: 'severity' } } });
    expect(wrong).toBeTypeOf('function');
  });
});

describe('uploads, waiting and paging', () => {
  let scanId: string;

  it('streams a file, waits for its parse, and gets the same scan back on a repeat', async () => {
    const sent: number[] = [];
    const accepted = await uploadScan(client, {
      source: FIXTURE,
      query: { name: 'sdk nightly', asset: 'sdk-host' },
      onBytes: (n) => sent.push(n),
    });
    scanId = accepted.scanId;
    expect(accepted.status).toBe('queued');
    expect(sent.at(-1)).toBeGreaterThan(0);
    const statuses: string[] = [];
    const scan = await waitForScan(client, scanId, { pollMs: 50, onStatus: (s) => statuses.push(s.status) });
    expect(scan.status).toBe('completed');
    expect(statuses.at(-1)).toBe('completed');
    expect(scan.counts.findings).toBeGreaterThan(0);

    const again = await uploadScan(client, {
      source: FIXTURE,
      query: { name: 'sdk nightly', asset: 'sdk-host' },
    });
    expect(again.scanId).toBe(scanId);
    const otherAsset = await uploadScan(client, {
      source: FIXTURE,
      query: { name: 'sdk nightly', asset: 'other' },
    });
    expect(otherAsset.scanId).not.toBe(scanId);
  });

  it('streams a Node stream, gzipped, with the key given', async () => {
    const accepted = await uploadScan(client, {
      source: createReadStream(FIXTURE),
      gzip: true,
      idempotencyKey: 'sdk-stream-1',
      query: { name: 'from a stream', asset: 'stream-host' },
    });
    const scan = await waitForScan(client, accepted.scanId, { pollMs: 50 });
    expect(scan).toMatchObject({ status: 'completed', name: 'from a stream', format: 'nessus' });
    const again = await uploadScan(client, {
      source: (async function* () {
        yield* createReadStream(FIXTURE);
      })(),
      idempotencyKey: 'sdk-stream-1',
      query: { name: 'from a stream', asset: 'stream-host' },
    });
    expect(again.scanId).toBe(accepted.scanId);
  });

  it('refuses an unreadable file before sending anything', async () => {
    await expect(uploadScan(client, { source: '/nonexistent/scan.nessus' })).rejects.toMatchObject({
      name: 'VulnTriageError',
      status: 0,
      message: expect.stringContaining('Cannot read /nonexistent/scan.nessus'),
    });
  });

  it('pages through nextCursor until the last page', async () => {
    const pages: (string | undefined)[] = [];
    const cases = await collectAll(
      paginate(async (cursor) => {
        pages.push(cursor);
        return unwrap(
          await client.GET('/api/v1/cases', { params: { query: { scan: scanId, limit: 1, cursor } } }),
        );
      }),
    );
    const whole = unwrap(
      await client.GET('/api/v1/cases', { params: { query: { scan: scanId, limit: 200 } } }),
    );
    expect(whole.data.length).toBeGreaterThan(1);
    expect(cases.map((c) => c.id)).toEqual(whole.data.map((c) => c.id));
    expect(pages[0]).toBeUndefined();
    expect(pages).toHaveLength(whole.data.length);
  });

  it('waits for a triage batch to finish', async () => {
    const worker = startTriageTestWorker(t);
    try {
      const created = unwrap(
        await client.POST('/api/v1/triage/batch', {
          body: { items: [{ title: 'Weak TLS cipher', severity: 'LOW', description: 'TLS 1.0 enabled' }] },
        }),
      );
      const batch = await waitForBatch(client, created.batchId, { pollMs: 50, timeoutMs: 60_000 });
      expect(batch).toMatchObject({ batchId: created.batchId, status: 'completed', total: 1, completed: 1 });
    } finally {
      await worker.close();
    }
  });

  it('gives up waiting after the timeout, naming what it waited for', async () => {
    const created = unwrap(
      await client.POST('/api/v1/triage/batch', {
        body: { items: [{ title: 'Weak TLS cipher', severity: 'LOW', description: 'no worker runs' }] },
      }),
    );
    await expect(waitForBatch(client, created.batchId, { pollMs: 20, timeoutMs: 50 })).rejects.toThrow(
      `Batch ${created.batchId} is still queued after 0 s; stopped waiting (it goes on on the server).`,
    );
  });
});
