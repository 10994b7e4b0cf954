/**
 * What a triage request (docs/triage.md#request-and-answer) and a batch request (docs/triage.md#batch-triage) may hold.
 *
 * The shapes are JSON Schemas compiled by the HTTP layer's strict Ajv (`api/schemas/triage.ts`,
 * built from the constants below), so every route speaks one error dialect. This module keeps
 * only the rules a schema cannot say, or cannot say clearly:
 * - `cveIds` may be empty or missing only when `description` is given (Ajv's `anyOf` would
 *   answer with one message per branch);
 * - a batch holds at most its plan's `batchMaxItems` (plans differ; the schema carries the
 *   largest, {@link BATCH_MAX_ITEMS});
 * - webhookUrl: an absolute `https://` URL without credentials whose host is neither an IP
 *   literal outside public unicast space nor an internal name (`outboundUrlProblem`,
 *   src/lib/outbound-url.ts): we call it from inside our network, so anything else is
 *   server-side request forgery. Delivery checks again against what the name resolves to then
 *   (webhook.ts). Two test-only relaxations: plain `http://127.0.0.1[:port]` with
 *   `allowLoopbackHttp`, private hosts with `allowPrivateHosts`.
 */
import type { FieldError } from '../../lib/errors.js';
import { outboundUrlProblem } from '../../lib/outbound-url.js';
import type { TriageRequest } from '../triage-engine/types.js';

/** Length limits; the 64 KiB body limit (docs/triage.md#request-and-answer) bounds the whole request anyway. */
export const TRIAGE_REQUEST_LIMITS = {
  titleMaxLength: 500,
  descriptionMaxLength: 20_000,
  assetNameMaxLength: 200,
  cvssVectorMaxLength: 200,
  cveIdsMaxItems: 100,
  cveIdMaxLength: 32,
} as const;

/** CVE-<year>-<number>, four or more digits (docs/triage.md#request-and-answer). */
export const CVE_ID_PATTERN = '^CVE-\\d{4}-\\d{4,}$';

/** Largest batch any plan allows (`service`, docs/api.md#plans-and-quotas); plans lower it. */
export const BATCH_MAX_ITEMS = 1000;

/** Longest accepted webhook URL. */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** Body of `POST /api/v1/triage/batch` once its schema passed (docs/triage.md#batch-triage). */
export interface BatchTriageRequest {
  items: TriageRequest[];
  webhookUrl?: string;
}

/** Which webhook hosts a process accepts (test-only relaxations, see the module header). */
export interface WebhookHostRules {
  /** Accept `http://127.0.0.1[:port]/...` webhooks (tests only). @defaultValue false */
  allowLoopbackHttp?: boolean;
  /** Accept webhooks to private-network addresses and internal names (tests only). @defaultValue false */
  allowPrivateHosts?: boolean;
}

/**
 * The rule of a triage request its schema leaves to code: CVEs or a description.
 * @param path - JSON Pointer prefix, e.g. `/items/3` for a batch item.
 */
export function triageRequestErrors(request: TriageRequest, path = ''): FieldError[] {
  if ((request.cveIds?.length ?? 0) > 0 || request.description !== undefined) return [];
  return [
    { path: `${path}/cveIds`, message: 'must contain at least one CVE id unless description is given' },
  ];
}

/** Why a webhook URL breaks the rule in this module's header (a field error message), or null. */
export function webhookUrlProblem(value: string, rules: WebhookHostRules = {}): string | null {
  return outboundUrlProblem(value, {
    allowLoopbackHttp: rules.allowLoopbackHttp,
    allowPrivateHosts: rules.allowPrivateHosts,
    maxLength: WEBHOOK_URL_MAX_LENGTH,
  });
}

/**
 * The rules of a batch its schema leaves to code: the plan's item limit (worded as Ajv words
 * `maxItems`, so the field reads the same whichever limit it broke), each item's CVEs or
 * description, and the webhook's host.
 */
export function batchRequestErrors(
  batch: BatchTriageRequest,
  maxItems: number,
  rules: WebhookHostRules = {},
): FieldError[] {
  const errors: FieldError[] =
    batch.items.length > maxItems
      ? [{ path: '/items', message: `must NOT have more than ${maxItems} items` }]
      : batch.items.flatMap((item, index) => triageRequestErrors(item, `/items/${index}`));
  if (batch.webhookUrl !== undefined) {
    const problem = webhookUrlProblem(batch.webhookUrl, rules);
    if (problem !== null) errors.push({ path: '/webhookUrl', message: problem });
  }
  return errors;
}
