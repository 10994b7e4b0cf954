/**
 * A scriptable HTTP server on 127.0.0.1 (random port) for provider adapter tests. Each request
 * consumes the next script step (the last step repeats); a renderer turns a step into the
 * provider's real wire format. Every request is recorded (method, path, headers, parsed body).
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TriageAnswer } from '../../../src/domain/triage-engine/types.js';

export type FakeStep =
  | { kind: 'success'; answer?: Partial<TriageAnswer>; usage?: [number, number] }
  | { kind: 'rate_limited'; retryAfterSeconds?: number; retryAfterMs?: number; retryAfterDate?: string }
  | { kind: 'insufficient_quota' }
  | { kind: 'server_error' }
  | { kind: 'overloaded' }
  | { kind: 'auth' }
  | { kind: 'malformed_json' }
  | { kind: 'schema_violation' }
  | { kind: 'slow'; delayMs: number; then: FakeStep };

export interface RenderedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  at: number;
  /** From the request's arrival to its response's last byte handed to the OS: the provider's time. */
  servedMs?: number;
}

export interface FakeServer {
  url: string;
  requests: RecordedRequest[];
  /** Replaces the script; the next request plays `steps[0]`. */
  script(steps: FakeStep[]): void;
  close(): Promise<void>;
}

export type Renderer = (
  step: Exclude<FakeStep, { kind: 'slow' }>,
  request: RecordedRequest,
  n: number,
) => RenderedResponse;

export const DEFAULT_ANSWER: TriageAnswer = {
  priority: 'HIGH',
  recommendedAction: 'PATCH_SCHEDULED',
  reasoning: 'The CVE is remotely exploitable and the asset is in production.',
  confidenceScore: 0.86,
  severityOverride: null,
};

function send(res: ServerResponse, r: RenderedResponse): void {
  res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
  res.end(r.body);
}

/** Starts a fake provider speaking the renderer's wire format. */
export async function startFakeServer(
  render: Renderer,
  steps: FakeStep[] = [{ kind: 'success' }],
): Promise<FakeServer> {
  let script = steps;
  let served = 0;
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const arrived = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep raw text: the adapter under test sent something that is not JSON
      }
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        at: Date.now(),
      };
      requests.push(recorded);
      res.on('finish', () => (recorded.servedMs = performance.now() - arrived));
      const n = served++;
      let step = script[Math.min(n, script.length - 1)] ?? { kind: 'success' };
      let delay = 0;
      while (step.kind === 'slow') {
        delay += step.delayMs;
        step = step.then;
      }
      const final = step;
      const respond = () => {
        if (!res.destroyed) send(res, render(final, recorded, n));
      };
      if (delay > 0) {
        const timer = setTimeout(respond, delay);
        res.on('close', () => clearTimeout(timer));
      } else {
        respond();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script(next) {
      script = next;
      served = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
