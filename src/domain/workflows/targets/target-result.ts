import type { IncomingHttpHeaders } from 'node:http';
import type { HttpOutcome } from './http-call.js';

/**
 * What a call to a target came to (STYLE: provider calls return results, not exceptions).
 * `retryable` follows docs/workflows.md#retries: 5xx, 408, 409, 429, timeouts and network errors are retried
 * (honouring `Retry-After`, GitHub's secondary rate limit 403 and an exhausted
 * `x-ratelimit-remaining`); any other 4xx fails with the target's own message.
 */
export type TargetFailure = {
  ok: false;
  retryable: boolean;
  status: number | null;
  /** The target's message (never a header or credential of ours). */
  message: string;
  /** How long the target asked us to wait, when it said. */
  retryAfterMs?: number;
  /**
   * Not sent at all: the workflow's own rate limit had no slot yet (`retryAfterMs` says when).
   * The delivery waits for it without spending an attempt.
   */
  throttled?: true;
};

export type TargetResult<T> = ({ ok: true; status: number } & T) | TargetFailure;

/** Most characters of a target's message kept on a delivery. */
const MAX_MESSAGE = 500;

function header(h: IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/** `Retry-After` (seconds or an HTTP date), else GitHub's `x-ratelimit-reset` when none remain. */
export function retryAfterMs(h: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const ra = header(h, 'retry-after');
  if (ra !== undefined) {
    if (/^\d+$/.test(ra.trim())) return Number(ra.trim()) * 1000;
    const at = Date.parse(ra);
    if (!Number.isNaN(at)) return Math.max(0, at - now);
  }
  if (header(h, 'x-ratelimit-remaining') === '0') {
    const reset = Number(header(h, 'x-ratelimit-reset'));
    if (Number.isFinite(reset) && reset > 0) return Math.max(1000, reset * 1000 - now);
  }
  return undefined;
}

/** The message a Jira or GitHub error body carries, else the status line. */
export function targetMessage(status: number, body: string): string {
  try {
    const j = JSON.parse(body) as {
      message?: unknown;
      errorMessages?: unknown;
      errors?: unknown;
    };
    const parts: string[] = [];
    if (typeof j.message === 'string') parts.push(j.message);
    if (Array.isArray(j.errorMessages)) parts.push(...j.errorMessages.filter((m) => typeof m === 'string'));
    if (j.errors && typeof j.errors === 'object' && !Array.isArray(j.errors)) {
      for (const [k, v] of Object.entries(j.errors)) if (typeof v === 'string') parts.push(`${k}: ${v}`);
    }
    if (Array.isArray(j.errors)) {
      for (const e of j.errors as { message?: unknown; field?: unknown; code?: unknown }[])
        if (e && typeof e === 'object')
          parts.push([e.field, e.code, e.message].filter((x) => typeof x === 'string').join(' '));
    }
    if (parts.length > 0) return `HTTP ${status}: ${parts.join('; ')}`.slice(0, MAX_MESSAGE);
  } catch {
    /* not JSON: fall through */
  }
  return `HTTP ${status}`;
}

/** A non-2xx answer or no answer as a failure; null for a 2xx. */
export function failureOf(outcome: HttpOutcome): TargetFailure | null {
  if (!outcome.ok && outcome.reason === 'rate_limited')
    return {
      ok: false,
      retryable: true,
      status: null,
      message: "held back by the workflow's rate limit",
      retryAfterMs: outcome.retryAfterMs,
      throttled: true,
    };
  if (!outcome.ok) {
    const retryable =
      outcome.reason === 'timeout' || outcome.reason === 'network_error' || outcome.reason === 'dns_error';
    return { ok: false, retryable, status: null, message: outcome.reason };
  }
  const { status } = outcome;
  if (status >= 200 && status < 300) return null;
  const wait = retryAfterMs(outcome.headers);
  // GitHub's secondary rate limit is a 403 with retry-after (or no requests remaining).
  const limited = status === 403 && wait !== undefined;
  const retryable = status >= 500 || status === 408 || status === 409 || status === 429 || limited;
  return {
    ok: false,
    retryable,
    status,
    message: targetMessage(status, outcome.body),
    ...(wait !== undefined ? { retryAfterMs: wait } : {}),
  };
}

export function parseJson<T>(body: string): T | null {
  try {
    return JSON.parse(body) as T;
  } catch {
    return null;
  }
}
