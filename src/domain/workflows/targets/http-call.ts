import {
  outboundRequest,
  type OutboundOutcome,
  type OutboundRequest,
  type OutboundRequestOptions,
} from '../../../lib/outbound-request.js';

/**
 * One HTTP request to a workflow target (Jira, GitHub, a webhook), through the one outbound
 * request of `lib/outbound-request.ts`: the URL rules of batch webhooks apply, the host is
 * resolved once and connected to by exactly the checked addresses, the answer is read up to a
 * bound, and every outcome is a value. Why not jira.js or Octokit: jira.js 6 needs Node 22, and
 * both clients retry and sleep in-process, where a delivery must instead fail fast and be retried
 * by its BullMQ job over hours (and survive a restart); what they add over this is typing we do
 * not need.
 *
 * Options of a target's calls: `gate` is the workflow's rate limit (`rate-limit.ts`): null lets
 * the request go (after any short wait for its slot), a number refuses it for that long.
 */
export type HttpCallOptions = OutboundRequestOptions;

export type HttpRequest = OutboundRequest;

export type HttpOutcome = OutboundOutcome;

/** Sends `req` with the workflows' user agent unless the target sets its own. */
export function httpCall(req: HttpRequest, options: HttpCallOptions = {}): Promise<HttpOutcome> {
  return outboundRequest(
    { ...req, headers: { 'user-agent': 'vulntriage-workflows/1', ...req.headers } },
    options,
  );
}

/**
 * A JSON API client of one tracker: `call(method, path, body?)` sends to `base + path` with the
 * tracker's fixed headers, the body as JSON when there is one.
 */
export function jsonApi(base: string, headers: Record<string, string>, options: HttpCallOptions = {}) {
  return (method: HttpRequest['method'], path: string, body?: unknown): Promise<HttpOutcome> =>
    httpCall(
      {
        method,
        url: `${base}${path}`,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      },
      options,
    );
}
