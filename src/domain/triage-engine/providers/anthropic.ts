/**
 * Anthropic Messages provider (docs/triage.md#providers): `POST {baseUrl}/v1/messages` with a single tool
 * whose `input_schema` is the answer schema and `tool_choice` forcing that tool, so the answer
 * arrives as the `tool_use` block's `input`, already structured.
 */
import type { Provider, ProviderResult, TokenUsage } from '../types.js';
import { ANSWER_SCHEMA_NAME, TRIAGE_ANSWER_JSON_SCHEMA } from './answer-schema.js';
import type { RemoteProviderOptions } from './remote-options.js';
import * as remote from './remote-provider.js';
import { DEFAULT_REQUEST_SETTINGS, settingsFor } from './model-settings.js';

/** Value of the `anthropic-version` header. */
export const ANTHROPIC_VERSION = '2023-06-01';

interface MessagesResponse {
  type?: string;
  content?: { type?: string; name?: string; input?: unknown }[];
  stop_reason?: string;
  usage?: { input_tokens?: number; output_tokens?: number };
}

/** Reads a Messages body into a provider result. Exported for tests. */
export function readMessagesResponse(json: unknown, estimated: TokenUsage): ProviderResult {
  const body = json as MessagesResponse;
  const usage = remote.reportedUsage(estimated, body.usage?.input_tokens, body.usage?.output_tokens);
  if (body.type !== 'message' || !Array.isArray(body.content))
    return remote.badResponse('not a message object', usage);
  if (body.stop_reason === 'max_tokens')
    return remote.schemaViolation('answer truncated at max_tokens', usage);
  const block = body.content.find((b) => b.type === 'tool_use' && b.name === ANSWER_SCHEMA_NAME);
  if (block === undefined) return remote.schemaViolation(`no ${ANSWER_SCHEMA_NAME} tool_use block`, usage);
  return remote.checkedAnswer(block.input, usage, json);
}

/** Creates an Anthropic Messages provider. Never throws from `triage`. */
export function createAnthropicProvider(options: RemoteProviderOptions): Provider {
  return remote.createRemoteProvider(options, {
    path: '/v1/messages',
    headers: (apiKey) => ({ 'x-api-key': apiKey, 'anthropic-version': ANTHROPIC_VERSION }),
    body: (model, system, user) => ({
      model,
      max_tokens: options.maxOutputTokens,
      // Sampling only: Anthropic's token budget is always `max_tokens` (config refuses another name).
      ...settingsFor(options.requestSettings ?? DEFAULT_REQUEST_SETTINGS, model).sampling,
      system,
      messages: [{ role: 'user', content: user }],
      tools: [
        {
          name: ANSWER_SCHEMA_NAME,
          description: 'Record the triage decision for this finding.',
          input_schema: TRIAGE_ANSWER_JSON_SCHEMA,
        },
      ],
      tool_choice: { type: 'tool', name: ANSWER_SCHEMA_NAME },
    }),
    read: readMessagesResponse,
  });
}
