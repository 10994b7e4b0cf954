/**
 * Batch triage request (DECISIONS §7): `{"items": [<triage request>, ...], "webhookUrl"?}`.
 *
 * webhookUrl rule (`outboundUrlProblem`, src/lib/outbound-url.ts): an absolute `https://` URL
 * without credentials whose host is neither an IP literal outside public unicast space (private,
 * loopback, link-local and metadata, unique-local, unspecified, multicast, IPv4-mapped forms of
 * these) nor an internal name (`localhost`, `*.internal`, single labels, ...): we call it from
 * inside our network, so anything else is server-side request forgery. Delivery checks again
 * against what the name resolves to then (webhook.ts). Two test-only relaxations: plain
 * `http://127.0.0.1[:port]` with `allowLoopbackHttp`, private hosts with `allowPrivateHosts`.
 */
import { outboundUrlProblem } from '../../lib/outbound-url.js';
import {
  TRIAGE_REQUEST_SCHEMA,
  checkTriageRequest,
  type CheckResult,
} from '../triage-engine/request-schema.js';
import type { FieldError } from '../triage-engine/schema-check.js';
import type { TriageRequest } from '../triage-engine/types.js';

/** Largest batch any plan allows (`service`, DECISIONS §3); plans lower it. */
export const BATCH_MAX_ITEMS = 1000;
/** Longest accepted webhook URL. */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** Plan-dependent options of the batch schema and checker. */
export interface BatchSchemaOptions {
  /** Plan limit (free 100, service 1,000). @defaultValue {@link BATCH_MAX_ITEMS} */
  maxItems?: number;
  /** Accept `http://127.0.0.1[:port]/...` webhooks (tests only). @defaultValue false */
  allowLoopbackHttp?: boolean;
  /** Accept webhooks to private-network addresses and internal names (tests only). @defaultValue false */
  allowPrivateHosts?: boolean;
}

/** Body of `POST /api/v1/triage/batch` after validation (DECISIONS §7). */
export interface BatchTriageRequest {
  items: TriageRequest[];
  webhookUrl?: string;
}

const HTTPS_PATTERN = '^https://[^\\s/@]+(/\\S*)?$';
const HTTPS_OR_LOOPBACK_PATTERN = '^(https://[^\\s/@]+|http://127\\.0\\.0\\.1(:\\d{1,5})?)(/\\S*)?$';

/**
 * Builds the draft-07 schema of the batch body for a plan's item limit. Its webhookUrl pattern checks
 * the scheme only; `checkBatchRequest` is the authority on hosts.
 */
export function buildBatchRequestSchema(options: BatchSchemaOptions = {}) {
  const { $schema, ...item } = TRIAGE_REQUEST_SCHEMA;
  return {
    $schema,
    type: 'object',
    additionalProperties: false,
    required: ['items'],
    properties: {
      items: { type: 'array', minItems: 1, maxItems: options.maxItems ?? BATCH_MAX_ITEMS, items: item },
      webhookUrl: {
        type: 'string',
        maxLength: WEBHOOK_URL_MAX_LENGTH,
        pattern: options.allowLoopbackHttp === true ? HTTPS_OR_LOOPBACK_PATTERN : HTTPS_PATTERN,
      },
    },
  } as const;
}

/** Why a webhook URL breaks the rule in this module's header (a field error message), or null. */
export function webhookUrlProblem(value: string, options: BatchSchemaOptions = {}): string | null {
  return outboundUrlProblem(value, {
    allowLoopbackHttp: options.allowLoopbackHttp,
    allowPrivateHosts: options.allowPrivateHosts,
    maxLength: WEBHOOK_URL_MAX_LENGTH,
  });
}

/** Checks a webhook URL against the rule in this module's header. */
export function isAllowedWebhookUrl(value: string, options: BatchSchemaOptions = {}): boolean {
  return webhookUrlProblem(value, options) === null;
}

/** Validates a parsed batch body; item errors are prefixed with `/items/<index>`. */
export function checkBatchRequest(
  body: unknown,
  options: BatchSchemaOptions = {},
): CheckResult<BatchTriageRequest> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, errors: [{ path: '/', message: 'must be an object' }] };
  }
  const errors: FieldError[] = [];
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) {
    if (key !== 'items' && key !== 'webhookUrl') {
      errors.push({ path: `/${key}`, message: 'is not an allowed property' });
    }
  }
  const maxItems = options.maxItems ?? BATCH_MAX_ITEMS;
  if (!Array.isArray(b.items)) {
    errors.push({ path: '/items', message: b.items === undefined ? 'is required' : 'must be an array' });
  } else if (b.items.length < 1 || b.items.length > maxItems) {
    errors.push({ path: '/items', message: `must have between 1 and ${maxItems} items` });
  } else {
    b.items.forEach((item, index) => {
      const result = checkTriageRequest(item, `/items/${index}`);
      if (!result.ok) errors.push(...result.errors);
    });
  }
  if (b.webhookUrl !== undefined) {
    const problem =
      typeof b.webhookUrl === 'string' ? webhookUrlProblem(b.webhookUrl, options) : 'must be an https URL';
    if (problem !== null) errors.push({ path: '/webhookUrl', message: problem });
  }
  return errors.length === 0 ? { ok: true, value: body as BatchTriageRequest } : { ok: false, errors };
}
