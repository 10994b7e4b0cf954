import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { githubInbound } from '../../../src/domain/workflows/targets/github/github-inbound.js';
import { jiraInbound } from '../../../src/domain/workflows/targets/jira/jira-inbound.js';
import { TARGETS } from '../../../src/domain/workflows/targets/registry.js';
import { REPLAY_WINDOW_MS, type InboundEvent } from '../../../src/domain/workflows/targets/target-inbound.js';

/**
 * What each tracker's status events mean (docs/workflows.md#status-flowing-back), read without a
 * database: replay fields, the delivery id to remember, and the status change asked of the case.
 */
const now = new Date('2026-03-01T12:00:00Z');

function event(
  body: Record<string, unknown>,
  headers: InboundEvent['headers'] = {},
  statusMap: InboundEvent['statusMap'] = {},
): InboundEvent {
  const rawBody = Buffer.from(JSON.stringify(body));
  return { headers, rawBody, body, now, statusMap };
}

describe('the registry', () => {
  it('gives an inbound reader to Jira and GitHub only, each with its signature header', () => {
    const readers = Object.entries(TARGETS).map(([kind, t]) => [kind, t.inbound?.signatureHeader ?? null]);
    expect(readers).toEqual([
      ['jira', 'x-hub-signature'],
      ['github', 'x-hub-signature-256'],
      ['webhook', null],
      ['slack', null],
    ]);
  });
});

describe('GitHub issues events', () => {
  const gh = (
    action: string,
    issue: Record<string, unknown> = {},
    statusMap: InboundEvent['statusMap'] = {},
    headers: InboundEvent['headers'] = { 'x-github-event': 'issues', 'x-github-delivery': 'd-1' },
  ) =>
    githubInbound.read(
      event({ action, issue: { number: 7, updated_at: now.toISOString(), ...issue } }, headers, statusMap),
    );

  it.each([
    ['closed', {}, {}, 'resolved'],
    ['closed', { state_reason: 'completed' }, {}, 'resolved'],
    ['closed', { state_reason: 'not_planned' }, {}, 'risk_accepted'],
    ['reopened', {}, {}, 'open'],
    ['closed', { state_reason: 'not_planned' }, { 'closed:not_planned': 'false_positive' }, 'false_positive'],
    ['closed', { state_reason: 'not_planned' }, { closed: 'resolved' }, 'resolved'],
    ['reopened', {}, { reopened: 'in_progress' }, 'in_progress'],
  ] as const)('%s %j with status map %j → %s', (action, issue, statusMap, status) => {
    expect(gh(action, issue, statusMap)).toEqual({
      kind: 'delivery',
      deliveryId: 'd-1',
      change: { externalId: '7', status, note: `GitHub issue #7 ${action}.` },
    });
  });

  it('answers a ping before any replay check', () => {
    expect(githubInbound.read(event({ zen: 'hi' }, { 'x-github-event': 'ping' }))).toEqual({
      kind: 'ignored',
      reason: 'ping',
    });
  });

  it('refuses an issue updated longer ago than the replay window, and a delivery without its id', () => {
    const old = new Date(now.getTime() - REPLAY_WINDOW_MS - 1).toISOString();
    expect(gh('closed', { updated_at: old })).toEqual({ kind: 'refused' });
    expect(gh('closed', { updated_at: 'yesterday' })).toEqual({ kind: 'refused' });
    expect(gh('closed', {}, {}, { 'x-github-event': 'issues' })).toEqual({ kind: 'refused' });
  });

  it('remembers a delivery it does not map, saying why', () => {
    expect(gh('labeled')).toEqual({
      kind: 'delivery',
      deliveryId: 'd-1',
      reason: 'action labeled is not mapped',
    });
    expect(gh('closed', {}, {}, { 'x-github-event': 'issue_comment', 'x-github-delivery': 'd-2' })).toEqual({
      kind: 'delivery',
      deliveryId: 'd-2',
      reason: 'not an issue event',
    });
  });
});

describe('Jira issue_updated events', () => {
  const issue = (name: string, category: string) => ({
    key: 'SEC-4',
    fields: { status: { name, statusCategory: { key: category } } },
  });
  const jira = (
    body: Record<string, unknown>,
    statusMap: InboundEvent['statusMap'] = {},
    headers: InboundEvent['headers'] = { 'x-atlassian-webhook-identifier': 'j-1' },
  ) => jiraInbound.read(event({ timestamp: now.getTime(), ...body }, headers, statusMap));

  it.each([
    ['Done', 'done', {}, 'resolved', false],
    ['In Progress', 'indeterminate', {}, 'open', true],
    ["Won't Fix", 'done', { "Won't Fix": 'risk_accepted' }, 'risk_accepted', false],
    ['Blocked', 'indeterminate', { 'category:indeterminate': 'in_progress' }, 'in_progress', false],
  ] as const)(
    '%s (%s) with status map %j → %s, within open: %s',
    (name, category, statusMap, status, withinOpen) => {
      expect(jira({ issue: issue(name, category) }, statusMap)).toEqual({
        kind: 'delivery',
        deliveryId: 'j-1',
        change: { externalId: 'SEC-4', status, note: `Jira issue SEC-4 moved to ${name}.`, withinOpen },
      });
    },
  );

  it('refuses a timestamp outside the replay window on either side, or none', () => {
    for (const timestamp of [
      now.getTime() - REPLAY_WINDOW_MS - 1,
      now.getTime() + REPLAY_WINDOW_MS + 1,
      'now',
    ])
      expect(jira({ timestamp, issue: issue('Done', 'done') })).toEqual({ kind: 'refused' });
  });

  it("remembers the body's hash when Jira sends no delivery identifier", () => {
    const e = event({ timestamp: now.getTime(), issue: issue('Done', 'done') });
    const hash = createHash('sha256').update(e.rawBody).digest('hex');
    expect(jiraInbound.read(e)).toMatchObject({ kind: 'delivery', deliveryId: `sha256:${hash}` });
  });

  it('remembers an event that is not about an issue, saying so', () => {
    expect(jira({ webhookEvent: 'project_updated' })).toEqual({
      kind: 'delivery',
      deliveryId: 'j-1',
      reason: 'not an issue event',
    });
  });
});
