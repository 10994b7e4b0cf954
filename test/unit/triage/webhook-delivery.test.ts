import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverWebhook, makeWebhookDeliverer, signWebhook } from '../../../src/domain/triage/webhook.js';

const opened: (Server | HttpServer)[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) {
    if ('closeAllConnections' in s) s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A receiver on 127.0.0.1 that answers with `handler` and records every request and connection. */
async function receiver(handler: (req: IncomingMessage, res: ServerResponse, n: number) => void) {
  const requests: { headers: IncomingMessage['headers']; body: string; url: string }[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += String(c)));
    req.on('end', () => {
      requests.push({ headers: req.headers, body, url: req.url ?? '' });
      handler(req, res, requests.length);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  opened.push(server);
  const port = (server.address() as AddressInfo).port;
  return { port, url: `http://127.0.0.1:${port}`, requests, connections: () => connections };
}

const local = { allowLoopbackHttp: true, allowPrivateHosts: true, backoffMs: 1 };
const payload = { type: 'triage.batch.finished', batchId: 'b1' };

describe('deliverWebhook', () => {
  it('POSTs the signed payload and reports delivered', async () => {
    const hook = await receiver((_req, res) => res.writeHead(204).end());
    expect(await deliverWebhook(`${hook.url}/hooks/triage?x=1`, 'k'.repeat(64), payload, local)).toBe(
      'delivered',
    );
    const [got] = hook.requests;
    expect(got!.url).toBe('/hooks/triage?x=1');
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['x-webhook-signature']).toBe(
      signWebhook('k'.repeat(64), Number(got!.headers['x-webhook-timestamp']), got!.body),
    );
    expect(JSON.parse(got!.body)).toEqual(payload);
  });

  it('retries 5xx and 429, then delivers; a 4xx is final', async () => {
    const flaky = await receiver((_req, res, n) => res.writeHead(n === 1 ? 500 : n === 2 ? 429 : 200).end());
    expect(await deliverWebhook(flaky.url, 'k', payload, local)).toBe('delivered');
    expect(flaky.requests).toHaveLength(3);

    const down = await receiver((_req, res) => res.writeHead(503).end());
    expect(await deliverWebhook(down.url, 'k', payload, local)).toBe('http_503');
    expect(down.requests).toHaveLength(3);

    const gone = await receiver((_req, res) => res.writeHead(410).end());
    expect(await deliverWebhook(gone.url, 'k', payload, local)).toBe('http_410');
    expect(gone.requests).toHaveLength(1);
  });

  it('follows no redirect', async () => {
    const elsewhere = await receiver((_req, res) => res.writeHead(200).end());
    const hook = await receiver((_req, res) => res.writeHead(307, { location: `${elsewhere.url}/x` }).end());
    expect(await deliverWebhook(hook.url, 'k', payload, local)).toBe('http_307');
    expect(elsewhere.connections()).toBe(0);
  });

  it('refuses a loopback receiver unless private hosts are allowed, without connecting', async () => {
    const hook = await receiver((_req, res) => res.writeHead(200).end());
    expect(await deliverWebhook(hook.url, 'k', payload, { allowLoopbackHttp: true })).toBe('refused_address');
    // By default even the URL is refused: plain http, loopback.
    expect(await deliverWebhook(hook.url, 'k', payload)).toBe('refused_url');
    expect(await deliverWebhook('https://169.254.169.254/latest/meta-data/', 'k', payload)).toBe(
      'refused_url',
    );
    expect(hook.connections()).toBe(0);
  });

  it('refuses a public-looking name that resolves to 127.0.0.1 (DNS rebinding), once and without connecting', async () => {
    const hook = await receiver((_req, res) => res.writeHead(200).end());
    let lookups = 0;
    const resolve = async () => {
      lookups++;
      return [
        { address: '93.184.215.14', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ];
    };
    const url = `https://hooks.example.com:${hook.port}/hook`;
    expect(await deliverWebhook(url, 'k', payload, { resolve, backoffMs: 1 })).toBe('refused_address');
    expect(lookups).toBe(1);
    expect(hook.connections()).toBe(0);
  });

  it('connects to the address it checked, resolving once per attempt and never again', async () => {
    // A TCP listener stands in for the receiver: the TLS handshake fails, but the connection and
    // the name sent for SNI show where the request went.
    const hellos: string[] = [];
    const tcp = createTcpServer((socket) => {
      socket.once('data', (d) => {
        hellos.push(d.toString('latin1'));
        socket.destroy();
      });
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    opened.push(tcp);
    const port = (tcp.address() as AddressInfo).port;
    const asked: string[] = [];
    const resolve = async (name: string) => {
      asked.push(name);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const outcome = await deliverWebhook(`https://hook.example.test:${port}/h`, 'k', payload, {
      resolve,
      allowPrivateHosts: true,
      attempts: 2,
      backoffMs: 1,
    });
    expect(outcome).toBe('network_error');
    expect(asked).toEqual(['hook.example.test', 'hook.example.test']);
    expect(hellos).toHaveLength(2);
    expect(hellos[0]).toContain('hook.example.test');
  });

  it('gives up on a silent receiver after the attempt timeout', async () => {
    const hook = await receiver(() => undefined);
    const started = Date.now();
    expect(await deliverWebhook(hook.url, 'k', payload, { ...local, attempts: 2, timeoutMs: 150 })).toBe(
      'timeout',
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(hook.requests).toHaveLength(2);
  });

  it('reads a bounded part of the answer: an endless or stalled body does not hold the delivery', async () => {
    const endless = await receiver((_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const started = Date.now();
    expect(await deliverWebhook(endless.url, 'k', payload, { ...local, maxResponseBytes: 1024 })).toBe(
      'delivered',
    );

    const stalled = await receiver((_req, res) => {
      res.writeHead(200);
      res.write('partial');
    });
    expect(await deliverWebhook(stalled.url, 'k', payload, { ...local, timeoutMs: 200 })).toBe('delivered');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('makeWebhookDeliverer applies the process settings; the default refuses private receivers', async () => {
    const hook = await receiver((_req, res) => res.writeHead(200).end());
    const strict = makeWebhookDeliverer({ webhookAllowPrivateHosts: false, webhookAllowLoopbackHttp: true });
    const open = makeWebhookDeliverer({ webhookAllowPrivateHosts: true, webhookAllowLoopbackHttp: true });
    expect(await strict(hook.url, 'k', payload)).toBe('refused_address');
    expect(await open(hook.url, 'k', payload)).toBe('delivered');
    expect(hook.requests).toHaveLength(1);
  });
});
