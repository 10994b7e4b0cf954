import { postJson, type PostJsonResult } from './http-client.js';
import type { RemoteProviderOptions } from './remote-options.js';
import { runLimited } from './rate-limiter.js';

/**
 * One remote provider call, the part every wire format shares: every attempt under the
 * provider's limiter (weighted by the prompt's tokens plus the answer budget), with bounded retries and the API
 * key kept out of every error. A caller who cancels while waiting for the limiter gets a
 * `timeout` result, never an exception.
 */
export function sendToProvider(
  options: RemoteProviderOptions,
  request: {
    url: string;
    headers: Record<string, string>;
    /** The body as JSON text (`promptBodyWriter`). */
    bodyJson: string;
    inputTokens: number;
    signal?: AbortSignal;
  },
): Promise<PostJsonResult> {
  // Each attempt is weighed by the limiter, retries included; the waits between them are not.
  const weight = request.inputTokens + options.maxOutputTokens;
  return postJson({
    ...options.http,
    url: request.url,
    headers: request.headers,
    bodyJson: request.bodyJson,
    timeoutMs: options.timeoutMs,
    maxRetries: options.maxRetries,
    secrets: [options.apiKey],
    ...(request.signal === undefined ? {} : { signal: request.signal }),
    limit: (attempt) =>
      runLimited(
        options.limiter,
        weight,
        request.signal,
        async () => {
          const result = await attempt();
          // The provider's own rate-limit headers slow the limiter down before it answers 429.
          if (result.ok) options.limiter?.observe?.(result.headers);
          return result;
        },
        () => ({
          ok: false as const,
          attempts: 0,
          error: { kind: 'timeout' as const, retryable: false, message: 'cancelled while rate-limited' },
        }),
        // Not retryable here: the router goes to the next tier rather than wait (docs/operations.md#failure-behaviour).
        (retryAfterMs) => ({
          ok: false as const,
          attempts: 0,
          error: {
            kind: 'rate_limited' as const,
            retryable: false,
            message: 'no provider capacity within the allowed wait',
            retryAfterMs,
          },
        }),
      ),
  });
}
