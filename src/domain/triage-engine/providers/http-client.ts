/**
 * The one HTTP path to model providers: bounded timeouts per attempt, retries with exponential
 * backoff (jittered between 50% and 100% of the step) that honour `retry-after-ms` and `retry-after` (seconds or an HTTP
 * date), and a closed classification of failures into `ProviderError` kinds. It returns results
 * and never throws (STYLE: errors). Credentials never reach a message: provider error text is
 * redacted of every configured secret and of anything shaped like an API key.
 */
import type { ProviderError, ProviderErrorKind } from '../types.js';
import { keepAliveFetch } from './keep-alive-fetch.js';

/** One provider call: where, what, and how long to try. */
export interface PostJsonOptions {
  url: string;
  headers: Record<string, string>;
  body: unknown;
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
  /** Injected in tests. @defaultValue {@link keepAliveFetch} (node:http with keep-alive; global fetch costs ~0.25 ms more a call) */
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
  | { ok: true; status: number; json: unknown; headers: Headers; attempts: number }
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
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
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

async function attempt(o: PostJsonOptions): Promise<AttemptResult> {
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
  let response: Response;
  let text: string;
  try {
    response = await (o.fetchImpl ?? keepAliveFetch)(o.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...o.headers },
      body: JSON.stringify(o.body),
      signal,
    });
    text = await response.text();
  } catch {
    if (o.signal?.aborted)
      return {
        ok: false,
        attempts: 1,
        error: { kind: 'timeout', retryable: false, message: 'cancelled by caller' },
      };
    if (timeout.aborted)
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
  }
  let json: unknown;
  let parsed = true;
  try {
    json = JSON.parse(text);
  } catch {
    parsed = false;
  }
  if (response.ok) {
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
