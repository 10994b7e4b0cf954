/**
 * OpenAI-compatible Chat Completions provider (docs/triage.md#providers): `POST {baseUrl}/chat/completions`
 * with `response_format: {type: 'json_schema', json_schema: {name, strict: true, schema}}`.
 * The same wire format is served by vLLM, Ollama and llama.cpp, so `baseUrl` is configurable.
 */
import type { Provider, ProviderInput, ProviderResult, TokenUsage } from '../types.js';
import { ANSWER_SCHEMA_NAME, TRIAGE_ANSWER_JSON_SCHEMA, parseTriageAnswer } from './answer-schema.js';
import { sendToProvider } from './remote-call.js';
import { promptBodyWriter } from './prompt-body.js';
import { DEFAULT_REQUEST_SETTINGS, settingsFor } from './model-settings.js';
import type { RemoteProviderOptions } from './remote-options.js';

export type { RemoteProviderOptions } from './remote-options.js';

interface ChatCompletion {
  choices?: { message?: { content?: string | null; refusal?: string | null }; finish_reason?: string }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

function violation(message: string, usage: TokenUsage): ProviderResult {
  return { ok: false, error: { kind: 'schema_violation', retryable: true, message }, usage };
}

/** Reads a Chat Completions body into a provider result. Exported for tests. */
export function readChatCompletion(json: unknown, estimated: TokenUsage): ProviderResult {
  const body = json as ChatCompletion;
  const usage = {
    inputTokens: body.usage?.prompt_tokens ?? estimated.inputTokens,
    outputTokens: body.usage?.completion_tokens ?? estimated.outputTokens,
  };
  const choice = body.choices?.[0];
  if (choice?.message === undefined) {
    return {
      ok: false,
      error: { kind: 'bad_response', retryable: false, message: 'no choices[0].message' },
      usage,
    };
  }
  if (choice.message.refusal) return violation('model refused to answer', usage);
  if (choice.finish_reason === 'length') return violation('answer truncated at max tokens', usage);
  const content = choice.message.content;
  if (typeof content !== 'string') return violation('message has no content', usage);
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return violation('content is not JSON', usage);
  }
  const checked = parseTriageAnswer(parsed);
  if (!checked.ok) return violation(checked.message, usage);
  return { ok: true, answer: checked.answer, usage, raw: json };
}

/** Creates an OpenAI-compatible provider. Never throws from `triage`. */
export function createOpenAiCompatibleProvider(options: RemoteProviderOptions): Provider {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const writeBody = promptBodyWriter((model, system, user) => {
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
  });
  return {
    name: options.name,
    async triage(input: ProviderInput, signal?: AbortSignal): Promise<ProviderResult> {
      const { system, user, inputTokens } = input.prompt;
      const bodyJson = writeBody(input.model, system, user);
      const result = await sendToProvider(options, {
        url,
        headers: { authorization: `Bearer ${options.apiKey}` },
        bodyJson,
        inputTokens,
        ...(signal === undefined ? {} : { signal }),
      });
      if (!result.ok) return { ok: false, error: result.error };
      return readChatCompletion(result.json, { inputTokens, outputTokens: 0 });
    },
  };
}
