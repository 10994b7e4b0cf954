import type { DeliveryCase, TargetRateLimit, WorkflowFields } from '../../types.js';
import { mappedPriority, renderLabels, renderSummary } from '../../template.js';
import { caseToAdf } from '../adf.js';
import { jsonApi, type HttpCallOptions } from '../http-call.js';
import type { ExternalIssue, IssueAdapter } from '../issue-adapter.js';
import { failureOf, parseJson, type TargetResult } from '../target-result.js';

/** A Jira Cloud project as a workflow's target. */
export interface JiraTarget {
  kind: 'jira';
  rateLimit?: TargetRateLimit;
  baseUrl: string;
  email: string;
  projectKey: string;
  issueType: string;
  /** Transition names used when a case closes or reopens. */
  transitions: { done: string; reopen: string };
}

/** Jira Cloud's limit on an issue summary. */
export const JIRA_SUMMARY_MAX = 255;

/** Jira labels may not contain whitespace. */
const label = (l: string) => l.replace(/\s+/g, '-').slice(0, 255);

/**
 * Jira Cloud REST v3 (basic auth with the account's email and API token): create
 * (`POST /rest/api/3/issue`, description in ADF), update (`PUT /rest/api/3/issue/{key}`),
 * transitions looked up by name (`GET …/transitions`, then `POST …/transitions`), and the
 * idempotency search for the marker label (`POST /rest/api/3/search/jql`).
 */
export function jiraAdapter(
  target: JiraTarget,
  apiToken: string,
  fields: WorkflowFields,
  http: HttpCallOptions,
): IssueAdapter {
  const base = target.baseUrl.replace(/\/+$/, '');
  const headers = {
    authorization: `Basic ${Buffer.from(`${target.email}:${apiToken}`).toString('base64')}`,
    accept: 'application/json',
    'content-type': 'application/json',
  };
  const call = jsonApi(base, headers, http);
  const browse = (key: string) => `${base}/browse/${encodeURIComponent(key)}`;
  const issueFields = (c: DeliveryCase, marker: string) => {
    const priority = mappedPriority(fields, c);
    return {
      summary: renderSummary(fields, c, JIRA_SUMMARY_MAX),
      description: caseToAdf(c),
      labels: [...renderLabels(fields, c, false).map(label), marker],
      ...(priority ? { priority: { name: priority } } : {}),
    };
  };

  return {
    async find(marker) {
      const res = await call('POST', '/rest/api/3/search/jql', {
        jql: `project = "${target.projectKey}" AND labels = "${marker}"`,
        fields: ['key'],
        maxResults: 1,
      });
      const failed = failureOf(res);
      if (failed || !res.ok) return failed!;
      const key = parseJson<{ issues?: { key?: string }[] }>(res.body)?.issues?.[0]?.key;
      return { ok: true, status: res.status, issue: key ? { externalId: key, url: browse(key) } : null };
    },

    async create(c, marker): Promise<TargetResult<{ issue: ExternalIssue }>> {
      const res = await call('POST', '/rest/api/3/issue', {
        fields: {
          project: { key: target.projectKey },
          issuetype: { name: target.issueType },
          ...issueFields(c, marker),
        },
      });
      const failed = failureOf(res);
      if (failed || !res.ok) return failed!;
      const key = parseJson<{ key?: string }>(res.body)?.key;
      if (!key)
        return {
          ok: false,
          retryable: true,
          status: res.status,
          message: 'Jira answered without an issue key',
        };
      return { ok: true, status: res.status, issue: { externalId: key, url: browse(key) } };
    },

    async update(c, key, marker) {
      const res = await call('PUT', `/rest/api/3/issue/${encodeURIComponent(key)}`, {
        fields: issueFields(c, marker),
      });
      const failed = failureOf(res);
      return failed ?? { ok: true, status: res.ok ? res.status : 0 };
    },

    async setState(_c, key, state) {
      const path = `/rest/api/3/issue/${encodeURIComponent(key)}/transitions`;
      const list = await call('GET', path);
      const failed = failureOf(list);
      if (failed || !list.ok) return failed!;
      const transitions =
        parseJson<{
          transitions?: {
            id: string;
            name: string;
            to?: { name?: string; statusCategory?: { key?: string } };
          }[];
        }>(list.body)?.transitions ?? [];
      const wanted = (state === 'closed' ? target.transitions.done : target.transitions.reopen).toLowerCase();
      const category = state === 'closed' ? 'done' : 'new';
      const t =
        transitions.find((x) => x.name.toLowerCase() === wanted || x.to?.name?.toLowerCase() === wanted) ??
        transitions.find((x) => x.to?.statusCategory?.key === category);
      if (!t)
        return {
          ok: false,
          retryable: false,
          status: list.status,
          message: `No Jira transition named "${state === 'closed' ? target.transitions.done : target.transitions.reopen}" from the issue's status`,
        };
      const res = await call('POST', path, { transition: { id: t.id } });
      return failureOf(res) ?? { ok: true, status: res.ok ? res.status : 0 };
    },
  };
}
