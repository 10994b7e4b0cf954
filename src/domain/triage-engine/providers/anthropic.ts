/**
 * Anthropic Messages provider (docs/triage.md#providers): `POST {baseUrl}/v1/messages` with a single tool
 * whose `input_schema` is the answer schema and `tool_choice` forcing that tool, so the answer
 * arrives as the `tool_use` block's `input`, already structured.
 */
import type { Provider, ProviderInput, ProviderResult, TokenUsage } from '../types.js';
import { ANSWER_SCHEMA_NAME, TRIAGE_ANSWER_JSON_SCHEMA, parseTriageAnswer } from './answer-schema.js';
import type { RemoteProviderOptions } from './openai-compatible.js';
import { sendToProvider } from './remote-call.js';
import { promptBodyWriter } from './prompt-body.js';
import { DEFAULT_REQUEST_SETTINGS, settingsFor } from './model-settings.js';

/** Value of the `anthropic-version` header. */
export const ANTHROPIC_VERSION = '2023-06-01';

interface MessagesResponse {
  type?: string;
  content?: { type?: string; name?: string; input?: unknown }[];
  stop_reason?: string;
  usage?: { input_tokens?: number; output_tokens?: number };
}

function violation(message: string, usage: TokenUsage): ProviderResult {
  return { ok: false, error: { kind: 'schema_violation', retryable: true, message }, usage };
}

/** Reads a Messages body into a provider result. Exported for tests. */
export function readMessagesResponse(json: unknown, estimated: TokenUsage): ProviderResult {
  const body = json as MessagesResponse;
  const usage = {
    inputTokens: body.usage?.input_tokens ?? estimated.inputTokens,
    outputTokens: body.usage?.output_tokens ?? estimated.outputTokens,
  };
  if (body.type !== 'message' || !Array.isArray(body.content)) {
    return {
      ok: false,
      error: { kind: 'bad_response', retryable: false, message: 'not a message object' },
      usage,
    };
  }
  if (body.stop_reason === 'max_tokens') return violation('answer truncated at max_tokens', usage);
  const block = body.content.find((b) => b.type === 'tool_use' && b.name === ANSWER_SCHEMA_NAME);
  if (block === undefined) return violation(`no ${ANSWER_SCHEMA_NAME} tool_use block`, usage);
  const checked = parseTriageAnswer(block.input);
  if (!checked.ok) return violation(checked.message, usage);
  return { ok: true, answer: checked.answer, usage, raw: json };
}

/** Creates an Anthropic Messages provider. Never throws from `triage`. */
export function createAnthropicProvider(options: RemoteProviderOptions): Provider {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/v1/messages`;
  const writeBody = promptBodyWriter((model, system, user) => ({
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
  }));
  return {
    name: options.name,
    async triage(input: ProviderInput, signal?: AbortSignal): Promise<ProviderResult> {
      const { system, user, inputTokens } = input.prompt;
      const bodyJson = writeBody(input.model, system, user);
      const result = await sendToProvider(options, {
        url,
        headers: { 'x-api-key': options.apiKey, 'anthropic-version': ANTHROPIC_VERSION },
        bodyJson,
        inputTokens,
        ...(signal === undefined ? {} : { signal }),
      });
      if (!result.ok) return { ok: false, error: result.error };
      return readMessagesResponse(result.json, { inputTokens, outputTokens: 0 });
    },
  };
}
