/**
 * OpenAI-compatible Chat Completions provider (docs/triage.md#providers): `POST {baseUrl}/chat/completions`
 * with `response_format: {type: 'json_schema', json_schema: {name, strict: true, schema}}`.
 * The same wire format is served by vLLM, Ollama and llama.cpp, so `baseUrl` is configurable.
 */
import type { Provider, ProviderResult, TokenUsage } from '../types.js';
import { ANSWER_SCHEMA_NAME, TRIAGE_ANSWER_JSON_SCHEMA } from './answer-schema.js';
import * as remote from './remote-provider.js';
import { DEFAULT_REQUEST_SETTINGS, settingsFor } from './model-settings.js';
import type { RemoteProviderOptions } from './remote-options.js';

export type { RemoteProviderOptions } from './remote-options.js';

interface ChatCompletion {
  choices?: { message?: { content?: string | null; refusal?: string | null }; finish_reason?: string }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/** Reads a Chat Completions body into a provider result. Exported for tests. */
export function readChatCompletion(json: unknown, estimated: TokenUsage): ProviderResult {
  const body = json as ChatCompletion;
  const usage = remote.reportedUsage(estimated, body.usage?.prompt_tokens, body.usage?.completion_tokens);
  const choice = body.choices?.[0];
  if (choice?.message === undefined) return remote.badResponse('no choices[0].message', usage);
  if (choice.message.refusal) return remote.schemaViolation('model refused to answer', usage);
  if (choice.finish_reason === 'length')
    return remote.schemaViolation('answer truncated at max tokens', usage);
  const content = choice.message.content;
  if (typeof content !== 'string') return remote.schemaViolation('message has no content', usage);
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return remote.schemaViolation('content is not JSON', usage);
  }
  return remote.checkedAnswer(parsed, usage, json);
}

/** Creates an OpenAI-compatible provider. Never throws from `triage`. */
export function createOpenAiCompatibleProvider(options: RemoteProviderOptions): Provider {
  return remote.createRemoteProvider(options, {
    path: '/chat/completions',
    headers: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
    body: (model, system, user) => {
      const settings = settingsFor(options.requestSettings ?? DEFAULT_REQUEST_SETTINGS, model);
      return {
        model,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        response_format: {
          type: 'json_schema',
          json_schema: { name: ANSWER_SCHEMA_NAME, strict: true, schema: TRIAGE_ANSWER_JSON_SCHEMA },
        },
        ...settings.sampling,
        [settings.tokenLimitParameter]: options.maxOutputTokens,
      };
    },
    read: readChatCompletion,
  });
}
