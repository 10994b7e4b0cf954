/**
 * The one HTTP path to model providers: bounded timeouts per attempt, retries with exponential
 * backoff (jittered between 50% and 100% of the step) that honour `retry-after-ms` and `retry-after` (seconds or an HTTP
 * date), and a closed classification of failures into `ProviderError` kinds. It returns results
 * and never throws (STYLE: errors). Credentials never reach a message: provider error text is
 * redacted of every configured secret and of anything shaped like an API key.
 */
import type { ProviderError, ProviderErrorKind } from '../types.js';
import {
  pooledPost,
  type ProviderAnswer,
  type ProviderTransport,
  type ResponseHeaders,
} from './pooled-post.js';

/** One provider call: where, what, and how long to try. */
export interface PostJsonOptions {
  url: string;
  headers: Record<string, string>;
  /** Sent as `JSON.stringify(body)`, unless {@link bodyJson} is given. */
  body?: unknown;
  /** The body already serialized as JSON (see `prompt-body.ts`): sent as is, `body` ignored. */
  bodyJson?: string;
  /** Per attempt, including reading the body. */
  timeoutMs: number;
  /** Retries after the first attempt. */
  maxRetries: number;
  signal?: AbortSignal;
  /** Strings that must never appear in an error message (the API key). */
  secrets: readonly string[];
  /** @defaultValue 500 */
  backoffBaseMs?: number;
  /** @defaultValue 8000 */
  backoffMaxMs?: number;
  /** A provider asking us to wait longer than this gets no retry: the job is better re-queued. @defaultValue 20000 */
  maxRetryAfterMs?: number;
  /** Injected in tests and benches. @defaultValue {@link pooledPost} (an undici `Pool` per origin) */
  transport?: ProviderTransport;
  /** Injected in tests: a `fetch` to post with instead of {@link transport}. */
  fetchImpl?: typeof fetch;
  /** Injected in tests. @defaultValue Math.random */
  random?: () => number;
  /**
   * Runs each attempt (not the waits between them) under the provider's limiter, so a retry
   * counts against its requests and tokens per minute like any call; may return a `timeout`
   * result instead, when the caller cancels while waiting for capacity.
   * @defaultValue runs the attempt at once
   */
  limit?: (attempt: () => Promise<AttemptResult>) => Promise<AttemptResult>;
}

/** Parsed JSON on success, a classified error otherwise; `attempts` counts HTTP attempts. */
export type PostJsonResult =
  | { ok: true; status: number; json: unknown; headers: ResponseHeaders; attempts: number }
  | { ok: false; status?: number; error: ProviderError; attempts: number };

const RETRYABLE_STATUS = new Set([408, 409, 429, 500, 502, 503, 504, 529]);
const KEY_SHAPES = /\b(sk|sk-ant|sk-proj|svc)[-_][A-Za-z0-9_-]{6,}/g;

/** Removes secrets and key-shaped strings, and bounds the length. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out.replace(KEY_SHAPES, '[redacted]').slice(0, 300);
}

/** Parses `retry-after-ms`, then `retry-after` (delta seconds or HTTP date); undefined if absent. */
export function retryAfterMs(headers: ResponseHeaders, now = Date.now()): number | undefined {
  const ms = Number(headers.get('retry-after-ms'));
  if (headers.has('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (value.trim() !== '' && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function errorBodyInfo(json: unknown): { type?: string; code?: string; message?: string } {
  const err = (json as { error?: unknown } | null)?.error;
  if (typeof err !== 'object' || err === null) return {};
  const e = err as Record<string, unknown>;
  const s = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { type: s(e.type), code: s(e.code), message: s(e.message) };
}

function classify(status: number, json: unknown): { kind: ProviderErrorKind; retryable: boolean } {
  const info = errorBodyInfo(json);
  if (status === 429 && (info.code === 'insufficient_quota' || info.type === 'insufficient_quota')) {
    // Out of credit: retrying only burns time until someone pays the bill.
    return { kind: 'insufficient_quota', retryable: false };
  }
  // Anthropic reports an exhausted prepaid balance as a 400 invalid_request_error.
  if (status === 400 && /credit balance/i.test(info.message ?? ''))
    return { kind: 'insufficient_quota', retryable: false };
  if (status === 429) return { kind: 'rate_limited', retryable: true };
  if (status === 408) return { kind: 'timeout', retryable: true };
  if (status === 401 || status === 403) return { kind: 'auth', retryable: false };
  if (RETRYABLE_STATUS.has(status) || status >= 500) return { kind: 'unavailable', retryable: true };
  return { kind: 'bad_response', retryable: false };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** One HTTP attempt; `retryAfter` is what the provider asked us to wait before the next. */
export type AttemptResult = PostJsonResult & { retryAfter?: number };

/** A `fetch` as a transport (tests inject fetches that answer with a `Response`). */
function fetchTransport(fetchImpl: typeof fetch): ProviderTransport {
  return async (url, request) => {
    const response = await fetchImpl(url, { method: 'POST', ...request });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
}

async function attempt(o: PostJsonOptions): Promise<AttemptResult> {
  // One controller and one timer per attempt: `AbortSignal.timeout` plus `AbortSignal.any` cost
  // ~90 µs a call on this machine, more than the rest of the client.
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, o.timeoutMs);
  const cancel = () => controller.abort();
  if (o.signal?.aborted) controller.abort();
  else o.signal?.addEventListener('abort', cancel, { once: true });
  const post = o.transport ?? (o.fetchImpl ? fetchTransport(o.fetchImpl) : pooledPost);
  let response: ProviderAnswer;
  try {
    response = await post(o.url, {
      headers: { 'content-type': 'application/json', accept: 'application/json', ...o.headers },
      body: o.bodyJson ?? JSON.stringify(o.body),
      signal: controller.signal,
    });
  } catch {
    if (o.signal?.aborted)
      return {
        ok: false,
        attempts: 1,
        error: { kind: 'timeout', retryable: false, message: 'cancelled by caller' },
      };
    if (timedOut)
      return {
        ok: false,
        attempts: 1,
        error: { kind: 'timeout', retryable: true, message: `no response within ${o.timeoutMs} ms` },
      };
    // The thrown error may carry the URL or headers; only a fixed message leaves this module.
    return {
      ok: false,
      attempts: 1,
      error: { kind: 'unavailable', retryable: true, message: 'connection failed' },
    };
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', cancel);
  }
  const text = response.text;
  const ok = response.status >= 200 && response.status < 300;
  let json: unknown;
  let parsed = true;
  try {
    json = JSON.parse(text);
  } catch {
    parsed = false;
  }
  if (ok) {
    if (parsed) return { ok: true, status: response.status, json, headers: response.headers, attempts: 1 };
    return {
      ok: false,
      status: response.status,
      attempts: 1,
      error: {
        kind: 'bad_response',
        retryable: false,
        message: `HTTP ${response.status} with a body that is not JSON`,
      },
    };
  }
  const { kind, retryable } = classify(response.status, json);
  const detail =
    kind === 'auth' ? 'authentication failed' : (errorBodyInfo(json).message ?? 'no error message');
  const retryAfter = retryAfterMs(response.headers);
  const error: ProviderError = {
    kind,
    retryable,
    message: redact(`HTTP ${response.status}: ${detail}`, o.secrets),
  };
  if (retryAfter !== undefined) error.retryAfterMs = retryAfter;
  return {
    ok: false,
    status: response.status,
    attempts: 1,
    error,
    ...(retryAfter === undefined ? {} : { retryAfter }),
  };
}

/** POSTs JSON with timeouts and retries; see the module comment for the policy. */
export async function postJson(o: PostJsonOptions): Promise<PostJsonResult> {
  const base = o.backoffBaseMs ?? 500;
  const max = o.backoffMaxMs ?? 8000;
  const maxWait = o.maxRetryAfterMs ?? 20_000;
  const random = o.random ?? Math.random;
  for (let n = 0; ; n++) {
    const result = o.limit ? await o.limit(() => attempt(o)) : await attempt(o);
    const attempts = n + 1;
    if (result.ok || !result.error.retryable || n >= o.maxRetries || o.signal?.aborted) {
      const { retryAfter: _r, ...rest } = result;
      return { ...rest, attempts };
    }
    const backoff = Math.min(max, base * 2 ** n) * (0.5 + random() / 2);
    const wait = result.retryAfter ?? backoff;
    if (wait > maxWait) {
      const { retryAfter: _r, ...rest } = result;
      return { ...rest, attempts };
    }
    await sleep(wait, o.signal);
  }
}
