import type { DeliveryCase, TargetRateLimit, WorkflowFields } from '../../types.js';
import { renderLabels, renderSummary } from '../../template.js';
import { caseToMarkdown } from '../adf.js';
import { jsonApi, type HttpCallOptions } from '../http-call.js';
import type { IssueAdapter } from '../issue-adapter.js';
import { failureOf, parseJson } from '../target-result.js';

/** A GitHub repository as a workflow's target. */
export interface GithubTarget {
  kind: 'github';
  rateLimit?: TargetRateLimit;
  owner: string;
  repo: string;
  apiUrl: string;
}

/** GitHub's limit on an issue title. */
export const GITHUB_TITLE_MAX = 256;

/**
 * GitHub Issues REST (a fine-grained token with Issues read/write): create
 * (`POST /repos/{owner}/{repo}/issues`), update and close/reopen (`PATCH …/issues/{number}`),
 * labels, and the idempotency lookup of the hidden marker in the body: first the repository's most
 * recently created issues (`GET …/issues`, read from GitHub's primary store, so an issue created a
 * moment ago is there), then the search (`GET /search/issues`, whose index lags creation by
 * seconds to minutes, but reaches issues older than the listed page).
 * Rate limits (`x-ratelimit-remaining`, `retry-after`, the secondary-limit 403) become a
 * retryable result with the wait GitHub asked for (see target-result.ts).
 */
export function githubAdapter(
  target: GithubTarget,
  token: string,
  fields: WorkflowFields,
  http: HttpCallOptions,
): IssueAdapter {
  const base = target.apiUrl.replace(/\/+$/, '');
  const repo = `/repos/${encodeURIComponent(target.owner)}/${encodeURIComponent(target.repo)}`;
  const headers = {
    authorization: `Bearer ${token}`,
    accept: 'application/vnd.github+json',
    'x-github-api-version': '2022-11-28',
    'content-type': 'application/json',
  };
  const call = jsonApi(base, headers, http);
  const content = (c: DeliveryCase, marker: string) => ({
    title: renderSummary(fields, c, GITHUB_TITLE_MAX),
    body: caseToMarkdown(c, marker),
    labels: renderLabels(fields, c, true).map((l) => l.slice(0, 50)),
  });

  return {
    async find(marker) {
      const listed = await call('GET', `${repo}/issues?state=all&sort=created&direction=desc&per_page=100`);
      const failedList = failureOf(listed);
      if (failedList || !listed.ok) return failedList!;
      type Found = { number?: number; html_url?: string; body?: string | null; pull_request?: unknown };
      const recent = (parseJson<Found[]>(listed.body) ?? []).find(
        (i) => !i.pull_request && typeof i.body === 'string' && i.body.includes(marker),
      );
      if (recent?.number)
        return {
          ok: true,
          status: listed.status,
          issue: { externalId: String(recent.number), url: recent.html_url ?? '' },
        };
      const q = `"${marker}" repo:${target.owner}/${target.repo} in:body type:issue`;
      const res = await call('GET', `/search/issues?q=${encodeURIComponent(q)}&per_page=1`);
      const failed = failureOf(res);
      if (failed || !res.ok) return failed!;
      const hit = parseJson<{ items?: Found[] }>(res.body)?.items?.[0];
      return {
        ok: true,
        status: res.status,
        issue: hit?.number ? { externalId: String(hit.number), url: hit.html_url ?? '' } : null,
      };
    },

    async create(c, marker) {
      const res = await call('POST', `${repo}/issues`, content(c, marker));
      const failed = failureOf(res);
      if (failed || !res.ok) return failed!;
      const made = parseJson<{ number?: number; html_url?: string }>(res.body);
      if (!made?.number)
        return {
          ok: false,
          retryable: true,
          status: res.status,
          message: 'GitHub answered without an issue number',
        };
      return {
        ok: true,
        status: res.status,
        issue: { externalId: String(made.number), url: made.html_url ?? '' },
      };
    },

    async update(c, number, marker) {
      const res = await call('PATCH', `${repo}/issues/${encodeURIComponent(number)}`, content(c, marker));
      return failureOf(res) ?? { ok: true, status: res.ok ? res.status : 0 };
    },

    async setState(c, number, state) {
      const body =
        state === 'closed'
          ? { state: 'closed', state_reason: c.status === 'resolved' ? 'completed' : 'not_planned' }
          : { state: 'open' };
      const res = await call('PATCH', `${repo}/issues/${encodeURIComponent(number)}`, body);
      return failureOf(res) ?? { ok: true, status: res.ok ? res.status : 0 };
    },
  };
}
