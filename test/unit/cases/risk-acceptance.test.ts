import { describe, expect, it } from 'vitest';
import { acceptanceErrors, longestAcceptanceFrom } from '../../../src/domain/cases/risk-acceptance.js';

/** The rules of a risk acceptance (docs/cases.md#risk-acceptance), at a fixed instant. */
const NOW = new Date('2026-11-27T12:00:00Z');
const at = (days: number) => new Date(NOW.getTime() + days * 86_400_000).toISOString();

describe('acceptanceErrors', () => {
  it.each([
    ['a change to another status without expiresAt', { status: 'resolved' }, 365, []],
    ['no status at all', {}, 365, []],
    [
      'an acceptance with its note and an expiry inside the policy',
      { status: 'risk_accepted', note: 'ok', expiresAt: at(30) },
      365,
      [],
    ],
    [
      'an acceptance ending exactly at the policy maximum',
      { status: 'risk_accepted', note: 'ok', expiresAt: at(90) },
      90,
      [],
    ],
    [
      'an acceptance one second past the maximum',
      {
        status: 'risk_accepted',
        note: 'ok',
        expiresAt: new Date(NOW.getTime() + 90 * 86_400_000 + 1000).toISOString(),
      },
      90,
      [
        {
          path: '/expiresAt',
          message: "must be at most 90 days from now (the workspace's longest risk acceptance)",
        },
      ],
    ],
    [
      'an acceptance ending now',
      { status: 'risk_accepted', note: 'ok', expiresAt: NOW.toISOString() },
      365,
      [{ path: '/expiresAt', message: 'must be in the future' }],
    ],
    [
      'an acceptance with nothing',
      { status: 'risk_accepted' },
      365,
      [
        { path: '/note', message: 'is required to accept a risk' },
        { path: '/expiresAt', message: 'is required to accept a risk' },
      ],
    ],
    [
      'an unparseable instant',
      { status: 'risk_accepted', note: 'x', expiresAt: '2027-13-45T99:99:99Z' },
      365,
      [{ path: '/expiresAt', message: 'must be an ISO 8601 date-time' }],
    ],
    [
      'expiresAt with another status',
      { status: 'in_progress', expiresAt: at(3) },
      365,
      [{ path: '/expiresAt', message: 'is only taken with status risk_accepted' }],
    ],
  ])('%s', (_name, req, maxDays, errors) => {
    expect(acceptanceErrors(req, NOW, maxDays)).toEqual(errors);
  });

  it('names fields under a path prefix', () => {
    expect(acceptanceErrors({ status: 'risk_accepted', note: 'x' }, NOW, 365, '/body')).toEqual([
      { path: '/body/expiresAt', message: 'is required to accept a risk' },
    ]);
  });

  it("gives a tracker's won't-fix the policy's longest acceptance", () => {
    expect(longestAcceptanceFrom(NOW, 30).toISOString()).toBe(at(30));
  });
});
