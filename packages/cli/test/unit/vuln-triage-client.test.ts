import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  idempotencyKeyFor,
  isRetryable,
  parseRetryAfter,
  VulnTriageError,
  withRetries,
  type Attempt,
} from '@vuln-triage/sdk';
import { EXIT, exitCodeOfProblem, toCliError } from '../../src/errors.js';
import { atOrAbove } from '../../src/fail-on.js';
import { colourEnabled, describeProblem, makeStyle, table } from '../../src/output.js';
import { formatEta } from '../../src/progress.js';
import { failureReason, type ScanStatus } from '../../src/scan-status.js';

/* The vuln-triage client's pure rules: retries (the SDK's), exit codes, the Idempotency-Key, output. */

const policy = { attempts: 4, baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 50 };
const retryable = (retryAfterMs: number | null = null): Attempt<string> => ({
  ok: false,
  error: new VulnTriageError('busy', { status: 503 }),
  retryable: true,
  retryAfterMs,
});

describe('retries', () => {
  it.each([
    ['7', 7000],
    ['0', 0],
    [' 12 ', 12000],
    ['', null],
    ['soon', null],
    [null, null],
  ])('reads Retry-After %j as %j ms', (header, ms) => {
    expect(parseRetryAfter(header, 0)).toBe(ms);
  });

  it('reads an HTTP-date Retry-After relative to now', () => {
    const now = Date.parse('2026-11-24T10:00:00Z');
    expect(parseRetryAfter('Tue, 24 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Tue, 24 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  it.each([
    [429, 'rate_limited', true],
    [429, 'monthly_limit_exceeded', false],
    [503, 'overloaded', true],
    [502, undefined, true],
    [504, undefined, true],
    [409, 'conflict', true],
    [409, 'idempotency_conflict', false],
    [500, 'internal_error', false],
    [401, 'invalid_api_key', false],
    [413, 'payload_too_large', false],
  ])('status %i %s is retried: %s', (status, code, expected) => {
    expect(isRetryable(status, code)).toBe(expected);
  });

  it('doubles the wait up to the cap, with at least half of each step, and takes Retry-After as given', () => {
    const p = { ...policy, baseDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => backoffMs(n, null, p, () => 0))).toEqual([50, 100, 200, 400, 500]);
    expect([1, 2, 3, 4, 5].map((n) => backoffMs(n, null, p, () => 1))).toEqual([100, 200, 400, 800, 1000]);
    expect(backoffMs(3, 2000, p, () => 0.5)).toBe(2000);
  });

  it('retries until success and reports each retry', async () => {
    const seen: number[] = [];
    const answers = [retryable(), retryable(2), { ok: true as const, value: 'done' }];
    const value = await withRetries(
      policy,
      async (n) => answers[n - 1]!,
      (i) => seen.push(i.waitMs),
    );
    expect(value).toBe('done');
    expect(seen).toHaveLength(2);
    expect(seen[1]).toBe(2);
  });

  it('gives up after the last try with exit 4, and at once on what is not retryable', async () => {
    let tries = 0;
    const gaveUp = withRetries(policy, async () => {
      tries++;
      return retryable();
    });
    const error = await gaveUp.catch((e: unknown) => e);
    expect(error).toMatchObject({ message: 'busy (gave up after 4 tries)', exhausted: true });
    expect(toCliError(error)).toMatchObject({ message: 'busy (gave up after 4 tries)', exitCode: 4 });
    expect(tries).toBe(4);

    tries = 0;
    const refused = withRetries(policy, async () => {
      tries++;
      return {
        ok: false,
        error: new VulnTriageError('no', { status: 400 }),
        retryable: false,
        retryAfterMs: null,
      };
    });
    const error2 = await refused.catch((e: unknown) => e);
    expect(toCliError(error2)).toMatchObject({ message: 'no', exitCode: 2 });
    expect(tries).toBe(1);
  });

  it('does not wait for a Retry-After longer than the policy allows', async () => {
    const error = await withRetries(policy, async () => retryable(60_000)).catch((e: unknown) => e);
    expect(toCliError(error)).toMatchObject({
      message: 'busy (the server asks to wait 60 s; not waiting)',
      exitCode: 4,
    });
  });
});

describe('exit codes of problems', () => {
  it.each([
    [400, 'invalid_request', EXIT.usage],
    [401, 'key_revoked', EXIT.service],
    [404, 'not_found', EXIT.service],
    [413, 'payload_too_large', EXIT.service],
    [415, 'unsupported_format', EXIT.scanFailed],
    [415, 'unsupported_media_type', EXIT.service],
    [422, 'unparseable_scan', EXIT.scanFailed],
    [503, 'overloaded', EXIT.service],
  ])('%i %s exits %i', (status, code, exit) => {
    expect(exitCodeOfProblem(status, code)).toBe(exit);
  });
});

describe('Idempotency-Key', () => {
  const sha = 'a'.repeat(64);
  it('is the same for the same file and options in any order, and visible ASCII within 255', () => {
    const a = idempotencyKeyFor(sha, { name: 'n', asset: 'x', format: undefined });
    const b = idempotencyKeyFor(sha, { asset: 'x', name: 'n' });
    expect(a).toBe(b);
    expect(a).toMatch(/^vt1-[0-9a-f]{64}$/);
  });
  it('differs for another file or another option', () => {
    const base = idempotencyKeyFor(sha, { name: 'n' });
    expect(idempotencyKeyFor('b'.repeat(64), { name: 'n' })).not.toBe(base);
    expect(idempotencyKeyFor(sha, { name: 'n', asset: 'x' })).not.toBe(base);
    expect(idempotencyKeyFor(sha, { name: 'm' })).not.toBe(base);
  });
});

describe('output', () => {
  it('colours only a terminal, and never with NO_COLOR set', () => {
    expect(colourEnabled({ isTTY: true }, {})).toBe(true);
    expect(colourEnabled({ isTTY: false }, {})).toBe(false);
    expect(colourEnabled({}, {})).toBe(false);
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
  });

  it('aligns table columns by visible width, colours ignored', () => {
    const s = makeStyle(true);
    const out = table(
      ['LEVEL', 'N'],
      [
        [s.severity('CRITICAL'), '12'],
        ['LOW', '3'],
      ],
      [1],
    );
    // eslint-disable-next-line no-control-regex
    expect(out.replace(/\u001b\[[0-9;]*m/g, '')).toBe('LEVEL      N\nCRITICAL  12\nLOW        3');
  });

  it('prints a problem as its detail, each invalid field and the request id', () => {
    expect(
      describeProblem(
        400,
        {
          title: 'Invalid request',
          code: 'invalid_request',
          detail: 'The request has invalid fields; see errors.',
          requestId: 'r-1',
          errors: [{ path: '/severity', message: 'must be one of …' }],
        },
        'HTTP 400',
      ),
    ).toBe(
      'The request has invalid fields; see errors. [400 invalid_request]\n  /severity: must be one of …\n  request id: r-1',
    );
    expect(describeProblem(502, null, 'HTTP 502 Bad Gateway')).toBe('HTTP 502 Bad Gateway [502]');
  });

  it("names a parse error's location once, whether or not the message already carries it", () => {
    const failed = (error: ScanStatus['error']): ScanStatus => ({
      scanId: 'scn_1',
      name: null,
      status: 'failed',
      format: 'nessus',
      bytes: 10,
      bytesParsed: 10,
      progress: 1,
      counts: { findings: 0, new: null, duplicate: null, bySeverity: {} },
      error,
    });
    expect(
      failureReason(
        failed({
          code: 'unparseable_scan',
          message: 'The XML is not well-formed: unclosed tag (line 22, column 299270).',
          line: 22,
          column: 299270,
        }),
      ),
    ).toBe('The XML is not well-formed: unclosed tag (line 22, column 299270). [unparseable_scan]');
    expect(
      failureReason(
        failed({ code: 'unparseable_scan', message: 'The file is broken.', line: 22, column: 5 }),
      ),
    ).toBe('The file is broken. at line 22, column 5 [unparseable_scan]');
    expect(failureReason(failed({ message: 'Bad record near line 220.', line: 22, column: null }))).toBe(
      'Bad record near line 220. at line 22',
    );
    expect(failureReason(failed(null))).toBe('the scan failed');
  });

  it('writes an ETA as seconds or minutes and seconds, and - when unknown', () => {
    expect([0, 0.2, 59, 60, 75.5, Infinity, Number.NaN].map(formatEta)).toEqual([
      '0s',
      '1s',
      '59s',
      '1m00s',
      '1m16s',
      '-',
      '-',
    ]);
  });

  it('names the severities at or above a threshold', () => {
    expect(atOrAbove('CRITICAL')).toEqual(['CRITICAL']);
    expect(atOrAbove('MEDIUM')).toEqual(['CRITICAL', 'HIGH', 'MEDIUM']);
  });
});
