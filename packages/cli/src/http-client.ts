import {
  createVulnTriageClient,
  parseProblem,
  retryingFetch,
  VulnTriageError,
  type Connection,
  type RetryListener,
  type RetryPolicy,
  type VulnTriageClient,
} from '@vuln-triage/sdk';
import { CliError, EXIT, exitCodeOfProblem, fromSdkError } from './errors.js';
import { describeProblem } from './output.js';

export type { Connection } from '@vuln-triage/sdk';
export type Query = Record<string, string | number | boolean | undefined>;

/** `path` (with a leading slash) under `baseUrl`, which may itself carry a path prefix. */
export function apiUrl(baseUrl: string, path: string, query: Query = {}): URL {
  const url = new URL(path.replace(/^\//, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

/** The error a refused answer becomes: its problem's detail, and the exit code its status means. */
export function refusal(status: number, statusText: string, body: string): CliError {
  const problem = parseProblem(body);
  return new CliError(
    describeProblem(status, problem, `HTTP ${status} ${statusText}`.trim()),
    exitCodeOfProblem(status, problem?.code),
    problem,
  );
}

/**
 * The service's HTTP API through the SDK (`@vuln-triage/sdk`): the key in `X-API-Key`, retries
 * with exponential backoff that honour `Retry-After`, and refusals turned into {@link CliError}s.
 * `sdk` is the typed client for the SDK's helpers (uploads, waiting, paging).
 */
export class ApiClient {
  readonly sdk: VulnTriageClient;
  private readonly fetch: (request: Request) => Promise<Response>;

  constructor(
    readonly connection: Connection,
    readonly retry: RetryPolicy,
    private readonly onRetry: (message: string) => void = () => undefined,
    readonly userAgent = 'vuln-triage-cli',
  ) {
    const notify: RetryListener = (info) => this.notifyRetry(info);
    this.sdk = createVulnTriageClient({ ...connection, retry, onRetry: notify, userAgent });
    this.fetch = retryingFetch(retry, notify);
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      'x-api-key': this.connection.apiKey,
      'user-agent': this.userAgent,
      accept: 'application/json, application/problem+json',
      ...extra,
    };
  }

  url(path: string, query: Query = {}): URL {
    return apiUrl(this.connection.baseUrl, path, query);
  }

  /** Reports a retry on the retry channel (stderr unless `--quiet`). */
  notifyRetry(info: { retry: number; waitMs: number; error: Error }): void {
    const first = info.error.message.split('\n')[0];
    this.onRetry(
      `${first}; retrying in ${(info.waitMs / 1000).toFixed(1)} s (${info.retry}/${this.retry.attempts - 1})`,
    );
  }

  /**
   * Sends one request (again after a retryable failure) and returns the successful `Response`
   * unread, for streaming downloads; or throws the refusal.
   */
  async send(method: string, path: string, init: { query?: Query; body?: unknown } = {}): Promise<Response> {
    const hasBody = init.body !== undefined;
    const request = new Request(this.url(path, init.query), {
      method,
      headers: this.headers(hasBody ? { 'content-type': 'application/json' } : {}),
      ...(hasBody ? { body: JSON.stringify(init.body) } : {}),
    });
    let res: Response;
    try {
      res = await this.fetch(request);
    } catch (err) {
      throw err instanceof VulnTriageError ? fromSdkError(err) : err;
    }
    if (res.ok) return res;
    throw refusal(res.status, res.statusText, await res.text().catch(() => ''));
  }

  /** A JSON answer of `method path`. */
  async json<T>(method: string, path: string, init: { query?: Query; body?: unknown } = {}): Promise<T> {
    const res = await this.send(method, path, init);
    const text = await res.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new CliError(`The service answered ${path} with something that is not JSON.`, EXIT.service);
    }
  }
}
