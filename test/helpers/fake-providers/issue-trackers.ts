/**
 * Fake Jira Cloud and GitHub Issues servers on 127.0.0.1 (random port) for workflow tests.
 * Stateful (issues are created, updated, transitioned, searched) and speaking the real wire
 * formats: auth headers checked (Jira basic email:token, GitHub bearer), Jira's ADF validation
 * of `description` and its 400 for an unknown field, GitHub's 422 "Validation Failed" for a long
 * title, rate-limit headers on every GitHub answer, and scripted failures (`failNext`): a 429
 * with Retry-After, 5xx, GitHub's secondary rate limit 403 with `retry-after`, a 400.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface FakeRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** When the request arrived (epoch ms, the fake's clock), as a target counts it for its limits. */
  at: number;
}

/** The most requests `requests` has in any one second of the clock (a target's per-second count). */
export function maxPerSecond(requests: FakeRequest[]): number {
  const perSecond = new Map<number, number>();
  for (const r of requests) {
    const s = Math.floor(r.at / 1000);
    perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
  }
  return Math.max(0, ...perSecond.values());
}

export interface FakeIssue {
  key: string;
  fields: Record<string, unknown>;
  status: string;
  /** GitHub: state and state_reason. */
  state?: 'open' | 'closed';
  stateReason?: string | null;
}

export interface FakeTracker {
  url: string;
  requests: FakeRequest[];
  issues: FakeIssue[];
  /** The next requests (matching `path`, when given) get these answers, in order. */
  failNext(answers: Scripted[], path?: RegExp): void;
  /** Every request is answered only after this long. */
  latencyMs: number;
  /** Refuse every connection (a target down). */
  down: boolean;
  /** GitHub: the search index has not caught up, so `GET /search/issues` finds no new issue. */
  searchLag?: boolean;
  close(): Promise<void>;
}

type Handler = (req: FakeRequest, t: FakeTracker) => Scripted;

async function startTracker(handle: Handler): Promise<FakeTracker> {
  const queue: { answer: Scripted; path?: RegExp }[] = [];
  // eslint-disable-next-line prefer-const -- assigned once, after the tracker its handler uses
  let server: Server;
  const tracker: FakeTracker = {
    url: '',
    requests: [],
    issues: [],
    latencyMs: 0,
    down: false,
    failNext(answers, path) {
      for (const answer of answers) queue.push({ answer, ...(path ? { path } : {}) });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server = createServer((req, res) => {
    if (tracker.down) {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    const at = Date.now();
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        /* kept as text */
      }
      const r: FakeRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body,
        at,
      };
      tracker.requests.push(r);
      const i = queue.findIndex((q) => !q.path || q.path.test(r.path));
      const answer = i >= 0 ? queue.splice(i, 1)[0]!.answer : handle(r, tracker);
      setTimeout(() => {
        res.writeHead(answer.status, { 'content-type': 'application/json;charset=UTF-8', ...answer.headers });
        res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
      }, tracker.latencyMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tracker.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return tracker;
}

// ---------------------------------------------------------------- Jira Cloud REST v3

const JIRA_FIELDS = new Set(['project', 'issuetype', 'summary', 'description', 'labels', 'priority']);
const JIRA_PRIORITIES = new Set(['Highest', 'High', 'Medium', 'Low', 'Lowest']);
const ADF_NODES = new Set([
  'doc',
  'paragraph',
  'heading',
  'bulletList',
  'orderedList',
  'listItem',
  'text',
  'hardBreak',
  'codeBlock',
]);
const JIRA_STATUSES: Record<string, { id: string; category: string }> = {
  'To Do': { id: '11', category: 'new' },
  'In Progress': { id: '21', category: 'indeterminate' },
  Done: { id: '31', category: 'done' },
};

/** Whether `node` is a valid ADF tree (the subset Jira checks: known node types, text nodes with text). */
export function isAdf(node: unknown, root = true): boolean {
  if (!node || typeof node !== 'object') return false;
  const n = node as { type?: unknown; version?: unknown; content?: unknown; text?: unknown };
  if (root && (n.type !== 'doc' || n.version !== 1)) return false;
  if (typeof n.type !== 'string' || !ADF_NODES.has(n.type)) return false;
  if (n.type === 'text') return typeof n.text === 'string' && n.text.length > 0;
  if (n.content === undefined) return n.type !== 'doc';
  return Array.isArray(n.content) && n.content.every((c) => isAdf(c, false));
}

const jiraError = (status: number, errors: Record<string, string>, messages: string[] = []): Scripted => ({
  status,
  body: { errorMessages: messages, errors },
});

export async function startFakeJira(auth: {
  email: string;
  token: string;
  project: string;
}): Promise<FakeTracker> {
  const expected = `Basic ${Buffer.from(`${auth.email}:${auth.token}`).toString('base64')}`;
  let next = 1;
  return startTracker((r, t) => {
    if (r.headers.authorization !== expected)
      return {
        status: 401,
        body: {
          errorMessages: ['You are not authenticated. Authentication required to perform this operation.'],
        },
      };
    const byKey = (key: string) => t.issues.find((i) => i.key === decodeURIComponent(key));
    const validate = (fields: Record<string, unknown>, creating: boolean): Scripted | null => {
      for (const name of Object.keys(fields))
        if (!JIRA_FIELDS.has(name))
          return jiraError(400, {
            [name]: `Field '${name}' cannot be set. It is not on the appropriate screen, or unknown.`,
          });
      if (creating && (fields.project as { key?: string })?.key !== auth.project)
        return jiraError(400, { project: 'valid project is required' });
      if (typeof fields.summary !== 'string' || fields.summary.length === 0)
        return jiraError(400, { summary: 'You must specify a summary of the issue.' });
      if (fields.summary.length > 255)
        return jiraError(400, { summary: 'Summary must be less than 255 characters.' });
      if (fields.description !== undefined && !isAdf(fields.description))
        return jiraError(400, {
          description: 'Operation value must be an Atlassian Document (see the Atlassian Document Format)',
        });
      const labels = fields.labels;
      if (
        labels !== undefined &&
        (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string' || /\s/.test(l)))
      )
        return jiraError(400, { labels: 'The label must not contain spaces.' });
      const p = (fields.priority as { name?: string } | undefined)?.name;
      if (p !== undefined && !JIRA_PRIORITIES.has(p))
        return jiraError(400, { priority: `Specify the Priority (name) in the string format` });
      return null;
    };
    const body = (r.body ?? {}) as {
      fields?: Record<string, unknown>;
      jql?: string;
      transition?: { id?: string };
    };
    if (r.method === 'POST' && r.path === '/rest/api/3/issue') {
      const bad = validate(body.fields ?? {}, true);
      if (bad) return bad;
      const key = `${auth.project}-${next++}`;
      t.issues.push({ key, fields: body.fields!, status: 'To Do' });
      return {
        status: 201,
        body: { id: String(10000 + next), key, self: `${t.url}/rest/api/3/issue/${key}` },
      };
    }
    if (r.method === 'POST' && r.path === '/rest/api/3/search/jql') {
      const label = /labels\s*=\s*"([^"]+)"/.exec(body.jql ?? '')?.[1];
      const hits = t.issues.filter(
        (i) => label && (i.fields.labels as string[] | undefined)?.includes(label),
      );
      return {
        status: 200,
        body: { issues: hits.slice(0, 1).map((i) => ({ id: '1', key: i.key })), isLast: true },
      };
    }
    let m = /^\/rest\/api\/3\/issue\/([^/]+)$/.exec(r.path);
    if (m && r.method === 'PUT') {
      const issue = byKey(m[1]!);
      if (!issue)
        return jiraError(404, {}, ['Issue does not exist or you do not have permission to see it.']);
      const bad = validate({ ...body.fields }, false);
      if (bad) return bad;
      issue.fields = { ...issue.fields, ...body.fields };
      return { status: 204 };
    }
    m = /^\/rest\/api\/3\/issue\/([^/]+)\/transitions$/.exec(r.path);
    if (m) {
      const issue = byKey(m[1]!);
      if (!issue)
        return jiraError(404, {}, ['Issue does not exist or you do not have permission to see it.']);
      if (r.method === 'GET')
        return {
          status: 200,
          body: {
            transitions: Object.entries(JIRA_STATUSES)
              .filter(([name]) => name !== issue.status)
              .map(([name, s]) => ({ id: s.id, name, to: { name, statusCategory: { key: s.category } } })),
          },
        };
      const to = Object.entries(JIRA_STATUSES).find(([, s]) => s.id === body.transition?.id);
      if (!to) return jiraError(400, {}, ['Transition id is not valid.']);
      issue.status = to[0];
      return { status: 204 };
    }
    return { status: 404, body: { errorMessages: ['Not found'] } };
  });
}

// ---------------------------------------------------------------- GitHub Issues REST

const ghHeaders = () => ({
  'x-ratelimit-limit': '5000',
  'x-ratelimit-remaining': '4999',
  'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
  'x-ratelimit-used': '1',
  'x-ratelimit-resource': 'core',
  'x-github-api-version-selected': '2022-11-28',
});

export const GITHUB_SECONDARY_LIMIT: Scripted = {
  status: 403,
  headers: { 'retry-after': '1', 'x-ratelimit-remaining': '4990' },
  body: {
    message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
    documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
  },
};

export async function startFakeGithub(auth: {
  token: string;
  owner: string;
  repo: string;
}): Promise<FakeTracker> {
  let next = 1;
  const repoPath = `/repos/${auth.owner}/${auth.repo}/issues`;
  return startTracker((r, t) => {
    if (r.headers.authorization !== `Bearer ${auth.token}`)
      return {
        status: 401,
        headers: ghHeaders(),
        body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' },
      };
    const body = (r.body ?? {}) as {
      title?: string;
      body?: string;
      labels?: string[];
      state?: string;
      state_reason?: string;
    };
    const tooLong = () =>
      typeof body.title === 'string' && body.title.length > 256
        ? {
            status: 422,
            headers: ghHeaders(),
            body: {
              message: 'Validation Failed',
              errors: [
                {
                  resource: 'Issue',
                  code: 'custom',
                  field: 'title',
                  message: 'title is too long (maximum is 256 characters)',
                },
              ],
            },
          }
        : null;
    const view = (i: FakeIssue) => ({
      number: Number(i.key),
      html_url: `https://github.com/${auth.owner}/${auth.repo}/issues/${i.key}`,
      title: i.fields.title,
      body: i.fields.body,
      state: i.state,
      state_reason: i.stateReason ?? null,
      labels: ((i.fields.labels as string[]) ?? []).map((name) => ({ name })),
    });
    if (r.method === 'POST' && r.path === repoPath) {
      if (typeof body.title !== 'string')
        return { status: 422, headers: ghHeaders(), body: { message: 'Validation Failed' } };
      const bad = tooLong();
      if (bad) return bad;
      const issue: FakeIssue = {
        key: String(next++),
        fields: { title: body.title, body: body.body, labels: body.labels },
        status: 'open',
        state: 'open',
      };
      t.issues.push(issue);
      return { status: 201, headers: ghHeaders(), body: view(issue) };
    }
    const m = new RegExp(`^${repoPath}/(\\d+)$`).exec(r.path);
    if (m && r.method === 'PATCH') {
      const issue = t.issues.find((i) => i.key === m[1]);
      if (!issue) return { status: 404, headers: ghHeaders(), body: { message: 'Not Found' } };
      const bad = tooLong();
      if (bad) return bad;
      for (const k of ['title', 'body', 'labels'] as const)
        if (body[k] !== undefined) issue.fields[k] = body[k];
      if (body.state === 'closed' || body.state === 'open') {
        issue.state = body.state;
        issue.stateReason = body.state === 'closed' ? (body.state_reason ?? 'completed') : 'reopened';
      }
      return { status: 200, headers: ghHeaders(), body: view(issue) };
    }
    if (r.method === 'GET' && r.path.startsWith(`${repoPath}?`)) {
      // List repository issues: `sort=created&direction=desc` and `per_page` are what the adapter sends.
      const params = new URL(r.path, 'http://x').searchParams;
      const newestFirst = params.get('direction') !== 'asc';
      const perPage = Math.min(Number(params.get('per_page') ?? 30), 100);
      const listed = newestFirst ? [...t.issues].reverse() : [...t.issues];
      return { status: 200, headers: ghHeaders(), body: listed.slice(0, perPage).map(view) };
    }
    if (r.method === 'GET' && r.path.startsWith('/search/issues?')) {
      const q = new URL(r.path, 'http://x').searchParams.get('q') ?? '';
      const marker = /"([^"]+)"/.exec(q)?.[1] ?? '\u0000';
      // GitHub's search index lags issue creation: with `searchLag` on, new issues are not found yet.
      const hits = t.searchLag ? [] : t.issues.filter((i) => String(i.fields.body ?? '').includes(marker));
      return {
        status: 200,
        headers: ghHeaders(),
        body: { total_count: hits.length, incomplete_results: false, items: hits.map(view) },
      };
    }
    return { status: 404, headers: ghHeaders(), body: { message: 'Not Found' } };
  });
}
