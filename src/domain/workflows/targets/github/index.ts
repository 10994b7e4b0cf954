import { describedPattern } from '../../../../lib/schema-patterns.js';
import type { TargetRateLimit } from '../../types.js';
import { urlErrors, type TargetKind } from '../target-kind.js';
import { githubInbound } from './github-inbound.js';
import { targetText, targetUrl } from '../target-schema.js';
import { GITHUB_TITLE_MAX, githubAdapter, type GithubTarget } from './github-adapter.js';

export interface GithubInput {
  kind: 'github';
  owner: string;
  repo: string;
  token: string;
  apiUrl?: string;
  rateLimit?: TargetRateLimit;
}

/**
 * GitHub Issues: one issue per case (a fine-grained token), status back through the repository's
 * webhook. Default rate limit 60 requests/min: "No more than 80 content-generating requests per
 * minute and no more than 500 content-generating requests per hour", and for many POST/PATCH
 * requests "wait at least one second between each request"
 * (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits,
 * …/best-practices-for-using-the-rest-api). The hourly 500 is left to GitHub's 403 with
 * `retry-after`, which deliveries already honour; set `{requests: 500, perSeconds: 3600}` for a
 * long backfill that should never meet it.
 */
export const github: TargetKind<'github', GithubTarget, GithubInput> = {
  kind: 'github',
  label: 'GitHub',
  requestSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['kind', 'owner', 'repo', 'token'],
    properties: {
      kind: { const: 'github' },
      owner: {
        type: 'string',
        pattern: describedPattern('^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$', 'must be a GitHub owner'),
      },
      repo: {
        type: 'string',
        pattern: describedPattern('^[A-Za-z0-9._-]{1,100}$', 'must be a GitHub repository name'),
      },
      token: targetText(2000),
      apiUrl: targetUrl,
    },
  },
  viewProperties: { owner: { type: 'string' }, repo: { type: 'string' }, apiUrl: { type: 'string' } },
  defaultRateLimit: { requests: 60, perSeconds: 60 },
  summaryMax: GITHUB_TITLE_MAX,
  priorityAsLabel: true,
  setup: (t, ctx) => {
    const apiUrl = t.apiUrl ?? 'https://api.github.com';
    return {
      target: { kind: 'github', owner: t.owner, repo: t.repo, apiUrl: apiUrl.replace(/\/+$/, '') },
      credential: t.token,
      errors: urlErrors(apiUrl, '/target/apiUrl', ctx),
    };
  },
  credentialProblem: () => null,
  delivery: { mode: 'issue', adapter: githubAdapter },
  inbound: githubInbound,
};
