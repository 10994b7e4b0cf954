import type { Provider, ProviderInput, ProviderResult, TokenUsage } from '../types.js';
import { parseTriageAnswer } from './answer-schema.js';
import { promptBodyWriter } from './prompt-body.js';
import type { RemoteProviderOptions } from './remote-options.js';
import { sendToProvider } from './remote-call.js';

/**
 * What one remote API's wire format adds to the call every remote provider makes: where the
 * request goes, how it is signed, what its body says, and how its answer is read.
 */
export interface WireFormat {
  /** Appended to the provider's `baseUrl` (trailing slashes of which are dropped). */
  path: string;
  headers(apiKey: string): Record<string, string>;
  /** The request body; pure, with `user` once as a string value (see `promptBodyWriter`). */
  body(model: string, system: string, user: string): unknown;
  /** The answer's JSON as a provider result; `estimated` stands in for usage it does not report. */
  read(json: unknown, estimated: TokenUsage): ProviderResult;
}

/** A remote provider speaking `wire`. Never throws from `triage`. */
export function createRemoteProvider(options: RemoteProviderOptions, wire: WireFormat): Provider {
  const url = `${options.baseUrl.replace(/\/+$/, '')}${wire.path}`;
  const headers = wire.headers(options.apiKey);
  const writeBody = promptBodyWriter(wire.body);
  return {
    name: options.name,
    async triage(input: ProviderInput, signal?: AbortSignal): Promise<ProviderResult> {
      const { system, user, inputTokens } = input.prompt;
      const result = await sendToProvider(options, {
        url,
        headers,
        bodyJson: writeBody(input.model, system, user),
        inputTokens,
        ...(signal === undefined ? {} : { signal }),
      });
      if (!result.ok) return { ok: false, error: result.error };
      return wire.read(result.json, { inputTokens, outputTokens: 0 });
    },
  };
}

/** The tokens an answer reports it used, the estimate for a count it leaves out. */
export function reportedUsage(estimated: TokenUsage, input?: number, output?: number): TokenUsage {
  return { inputTokens: input ?? estimated.inputTokens, outputTokens: output ?? estimated.outputTokens };
}

/** An answer that is not the answer schema's: worth asking again (the router may retry). */
export function schemaViolation(message: string, usage: TokenUsage): ProviderResult {
  return { ok: false, error: { kind: 'schema_violation', retryable: true, message }, usage };
}

/** A body that is not the wire format's at all: asking again will not help. */
export function badResponse(message: string, usage: TokenUsage): ProviderResult {
  return { ok: false, error: { kind: 'bad_response', retryable: false, message }, usage };
}

/** The model's structured answer, checked against the answer schema; `raw` is the whole body. */
export function checkedAnswer(candidate: unknown, usage: TokenUsage, raw: unknown): ProviderResult {
  const checked = parseTriageAnswer(candidate);
  if (!checked.ok) return schemaViolation(checked.message, usage);
  return { ok: true, answer: checked.answer, usage, raw };
}
