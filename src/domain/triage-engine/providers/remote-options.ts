import type { PostJsonOptions } from './http-client.js';
import type { ProviderLimiter } from './rate-limiter.js';
import type { ProviderRequestSettings } from './model-settings.js';

/** Settings of a remote provider adapter (OpenAI-compatible or Anthropic), shared by `remote-call.ts`. */
export interface RemoteProviderOptions {
  /** Provider id, e.g. `openai`. */
  name: string;
  /** e.g. `https://api.openai.com/v1`; no trailing slash needed. */
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  maxRetries: number;
  maxOutputTokens: number;
  /** Token-limit parameter name and sampling, per model. @defaultValue `DEFAULT_REQUEST_SETTINGS` (model-settings.ts) */
  requestSettings?: ProviderRequestSettings;
  limiter?: ProviderLimiter;
  /** Test seams of the HTTP helper (fetch, backoff). */
  http?: Pick<PostJsonOptions, 'fetchImpl' | 'backoffBaseMs' | 'backoffMaxMs' | 'maxRetryAfterMs' | 'random'>;
}
