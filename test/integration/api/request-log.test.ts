import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/test-app.js';
import { createLogger } from '../../../src/lib/logger.js';

const KEY_SHAPED = `svc_${'A'.repeat(38)}`;

function sink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  return {
    stream: new Writable({
      write(chunk, _enc, done) {
        chunks.push(String(chunk));
        done();
      },
    }),
    text: () => chunks.join(''),
  };
}

const messages = (t: TestApp) => t.logs.map((l) => (JSON.parse(l) as { msg: string }).msg);

describe('request logs for a person at `npm start` (requestLog: line)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ app: { requestLog: 'line' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('writes one short line per request, with the key in a URL masked', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz' });
    await t.app.inject({ method: 'GET', url: `/api/v1/keys/${KEY_SHAPED}` });
    const lines = messages(t);
    expect(lines).toContainEqual(expect.stringMatching(/^GET \/healthz 200 \d+ ms$/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^GET \/api\/v1\/keys\/svc_\[redacted\] \d{3} \d+ ms$/),
    );
    expect(lines).not.toContain('incoming request');
    expect(lines).not.toContain('request completed');
    expect(t.logs.join('\n')).not.toContain(KEY_SHAPED);
  });
});

describe('request logs for web and worker processes (the default)', () => {
  it('keeps Fastify JSON lines', async () => {
    const t = await startTestApp();
    try {
      await t.app.inject({ method: 'GET', url: '/healthz' });
      expect(messages(t)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
    } finally {
      await t.close();
    }
  });
});

describe('the pretty logger (pino-pretty)', () => {
  it('prints a short human-readable line, not JSON', () => {
    const out = sink();
    createLogger('info', out.stream, { pretty: true }).info('GET /healthz 200 1 ms');
    expect(out.text()).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: GET \/healthz 200 1 ms\n$/);
  });

  it('redacts secrets as the JSON logger does', () => {
    const out = sink();
    createLogger('info', out.stream, { pretty: true }).info(
      { req: { method: 'GET', url: `/x?k=${KEY_SHAPED}`, headers: { 'x-api-key': KEY_SHAPED } } },
      'seen',
    );
    expect(out.text()).toContain('INFO: seen');
    expect(out.text()).not.toContain(KEY_SHAPED);
  });
});
