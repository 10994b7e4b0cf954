import { describedPattern } from '../../../../lib/schema-patterns.js';
import type { TargetRateLimit } from '../../types.js';
import { urlErrors, type TargetKind } from '../target-kind.js';
import { jiraInbound } from './jira-inbound.js';
import { targetText, targetUrl } from '../target-schema.js';
import { JIRA_SUMMARY_MAX, jiraAdapter, type JiraTarget } from './jira-adapter.js';

export interface JiraInput {
  kind: 'jira';
  baseUrl: string;
  email: string;
  apiToken: string;
  projectKey: string;
  issueType?: string;
  transitions?: { done?: string; reopen?: string };
  rateLimit?: TargetRateLimit;
}

/**
 * Jira Cloud: one issue per case (REST v3, basic auth with an API token), status back through
 * Jira's webhook. Default rate limit 10 requests/s: Atlassian's burst limits are per site, per
 * endpoint and method (token buckets; an API token's traffic shares them with every other
 * integration and user of the site), and one issue takes at most 20 writes in 2 s
 * (https://developer.atlassian.com/cloud/jira/platform/rate-limiting/); 10/s stays well inside.
 */
export const jira: TargetKind<'jira', JiraTarget, JiraInput> = {
  kind: 'jira',
  label: 'Jira',
  requestSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['kind', 'baseUrl', 'email', 'apiToken', 'projectKey'],
    properties: {
      kind: { const: 'jira' },
      baseUrl: targetUrl,
      email: {
        type: 'string',
        maxLength: 254,
        pattern: describedPattern('^[^\\s@]+@[^\\s@]+$', 'must be an email address'),
      },
      apiToken: targetText(2000),
      projectKey: {
        type: 'string',
        pattern: describedPattern('^[A-Z][A-Z0-9_]{0,19}$', 'must be a Jira project key such as SEC'),
      },
      issueType: targetText(100),
      transitions: {
        type: 'object',
        additionalProperties: false,
        properties: { done: targetText(100), reopen: targetText(100) },
      },
    },
  },
  viewProperties: {
    baseUrl: { type: 'string' },
    email: { type: 'string' },
    projectKey: { type: 'string' },
    issueType: { type: 'string' },
    transitions: { type: 'object', properties: { done: { type: 'string' }, reopen: { type: 'string' } } },
  },
  defaultRateLimit: { requests: 10, perSeconds: 1 },
  summaryMax: JIRA_SUMMARY_MAX,
  priorityAsLabel: false,
  setup: (t, ctx) => ({
    target: {
      kind: 'jira',
      baseUrl: t.baseUrl.replace(/\/+$/, ''),
      email: t.email,
      projectKey: t.projectKey,
      issueType: t.issueType ?? 'Bug',
      transitions: { done: t.transitions?.done ?? 'Done', reopen: t.transitions?.reopen ?? 'To Do' },
    },
    credential: t.apiToken,
    errors: urlErrors(t.baseUrl, '/target/baseUrl', ctx),
  }),
  credentialProblem: () => null,
  delivery: { mode: 'issue', adapter: jiraAdapter },
  inbound: jiraInbound,
};
