import createClient, { type Client } from 'openapi-fetch';
import { networkError, refusal, VulnTriageError } from './errors.js';
import type { paths } from './generated/openapi.js';
import {
  DEFAULT_RETRY,
  isRetryable,
  parseRetryAfter,
  withRetries,
  type RetryListener,
  type RetryPolicy,
} from './retry.js';

/** Where the service is and who is calling. */
export interface Connection {
  /** The service's address, e.g. `https://triage.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** An API key, sent as `X-API-Key` (docs/api.md#keys). */
  apiKey: string;
}

export interface ClientOptions extends Connection {
  /** @defaultValue {@link DEFAULT_RETRY} */
  retry?: Partial<RetryPolicy>;
  /** Told before each retry's wait (for a log line). */
  onRetry?: RetryListener;
  /** @defaultValue `vuln-triage-sdk` */
  userAgent?: string;
  /** The fetch to send with. @defaultValue globalThis.fetch */
  fetch?: (request: Request) => Promise<Response>;
}

/** The typed client: `client.GET('/api/v1/cases', { params: { query: { severity: 'HIGH' } } })`. */
export type VulnTriageClient = Client<paths> & {
  readonly connection: Readonly<Connection>;
  readonly retry: Readonly<RetryPolicy>;
  readonly onRetry: RetryListener;
  readonly userAgent: string;
};

/**
 * A fetch that sends a request again after a retryable answer (429 but not
 * `monthly_limit_exceeded`, 409 `conflict`, 502–504) or a network error, waiting what
 * `Retry-After` says, else backing off exponentially. Other answers come back as they are. When
 * the policy gives up it rejects with a {@link VulnTriageError} marked `exhausted`.
 */
export function retryingFetch(
  policy: RetryPolicy,
  onRetry: RetryListener = () => undefined,
  send: (request: Request) => Promise<Response> = (r) => globalThis.fetch(r),
): (request: Request) => Promise<Response> {
  return (request) => {
    const url = new URL(request.url);
    return withRetries<Response>(
      policy,
      async () => {
        let res: Response;
        try {
          // A clone per try: a request body can be read once.
          res = await send(request.clone());
        } catch (err) {
          return { ok: false, error: networkError(url, err), retryable: true, retryAfterMs: null };
        }
        if (res.ok || !isRetryable(res.status, undefined)) return { ok: true, value: res };
        const body = await res.text().catch(() => '');
        const error = refusal(res.status, res.statusText, body);
        if (!isRetryable(res.status, error.code)) {
          return {
            ok: true,
            value: new Response(body, {
              status: res.status,
              statusText: res.statusText,
              headers: res.headers,
            }),
          };
        }
        return {
          ok: false,
          error,
          retryable: true,
          retryAfterMs: parseRetryAfter(res.headers.get('retry-after')),
        };
      },
      onRetry,
    );
  };
}

/** A client of the service's API, its types generated from the service's own OpenAPI document. */
export function createVulnTriageClient(options: ClientOptions): VulnTriageClient {
  const retry: RetryPolicy = { ...DEFAULT_RETRY, ...options.retry };
  const onRetry = options.onRetry ?? (() => undefined);
  const userAgent = options.userAgent ?? 'vuln-triage-sdk';
  const client = createClient<paths>({
    // openapi-fetch appends the path to baseUrl as it is: a trailing slash would double.
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: {
      'x-api-key': options.apiKey,
      'user-agent': userAgent,
      accept: 'application/json, application/problem+json',
    },
    fetch: retryingFetch(retry, onRetry, options.fetch),
  });
  return Object.assign(client, {
    connection: Object.freeze({ baseUrl: options.baseUrl, apiKey: options.apiKey }),
    retry: Object.freeze(retry),
    onRetry,
    userAgent,
  });
}

/** The answer of an openapi-fetch call (the fields {@link unwrap} reads). */
export interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The data of a successful call, or a {@link VulnTriageError} carrying the problem document the
 * service refused it with: `const page = unwrap(await client.GET('/api/v1/cases'))`.
 */
export function unwrap<T>(result: FetchResult<T>): T {
  const { response } = result;
  if (response.ok) return result.data as T;
  const body =
    result.error === undefined
      ? ''
      : typeof result.error === 'string'
        ? result.error
        : JSON.stringify(result.error);
  throw refusal(response.status, response.statusText, body);
}

export { VulnTriageError };
