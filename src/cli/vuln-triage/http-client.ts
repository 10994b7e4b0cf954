import { CliError, EXIT, exitCodeOfProblem, type Problem } from './errors.js';
import { describeProblem } from './output.js';
import { isRetryable, parseRetryAfter, withRetries, type Attempt, type RetryPolicy } from './retry.js';

/** Where the service is and who is calling: `--url`/`VULN_TRIAGE_URL`, `--api-key`/`VULN_TRIAGE_API_KEY`. */
export interface Connection {
  baseUrl: string;
  apiKey: string;
}

export type Query = Record<string, string | number | boolean | undefined>;

/** `path` (with a leading slash) under `baseUrl`, which may itself carry a path prefix. */
export function apiUrl(baseUrl: string, path: string, query: Query = {}): URL {
  const url = new URL(path.replace(/^\//, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

/** The problem document of a refused answer, or null when the body is not one (a proxy's HTML page). */
export function parseProblem(text: string): Problem | null {
  try {
    const doc = JSON.parse(text) as unknown;
    return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Problem) : null;
  } catch {
    return null;
  }
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

/** A network failure (refused, reset, DNS, TLS) as a retryable CLI error naming its cause. */
export function networkError(url: URL, err: unknown): CliError {
  // fetch wraps the socket's error in `cause`; node:http hands it over as it is.
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } } | null;
  const reason = e?.cause?.code ?? e?.code ?? e?.cause?.message ?? e?.message ?? String(err);
  return new CliError(`Could not reach ${url.origin}: ${reason}`, EXIT.service);
}

/** Classifies a refused `Response` (read in full) for {@link withRetries}. */
export async function refusedAttempt<T>(res: Response): Promise<Attempt<T>> {
  const body = await res.text().catch(() => '');
  const error = refusal(res.status, res.statusText, body);
  return {
    ok: false,
    error,
    retryable: isRetryable(res.status, error.problem?.code),
    retryAfterMs: parseRetryAfter(res.headers.get('retry-after')),
  };
}

/**
 * The service's HTTP API over Node's fetch, with the key in `X-API-Key`, retries with
 * exponential backoff that honour `Retry-After`, and refusals turned into {@link CliError}s.
 */
export class ApiClient {
  constructor(
    readonly connection: Connection,
    readonly retry: RetryPolicy,
    private readonly onRetry: (message: string) => void = () => undefined,
    readonly userAgent = 'vuln-triage-cli',
  ) {}

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
  notifyRetry(info: { retry: number; waitMs: number; error: CliError }): void {
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
    const url = this.url(path, init.query);
    const hasBody = init.body !== undefined;
    return withRetries<Response>(
      this.retry,
      async () => {
        let res: Response;
        try {
          res = await fetch(url, {
            method,
            headers: this.headers(hasBody ? { 'content-type': 'application/json' } : {}),
            ...(hasBody ? { body: JSON.stringify(init.body) } : {}),
          });
        } catch (err) {
          return { ok: false, error: networkError(url, err), retryable: true, retryAfterMs: null };
        }
        if (res.ok) return { ok: true, value: res };
        return refusedAttempt<Response>(res);
      },
      (info) => this.notifyRetry(info),
    );
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
