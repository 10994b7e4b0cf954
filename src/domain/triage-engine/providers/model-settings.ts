/**
 * Request parameters that differ between a provider's models. Reasoning-class models (OpenAI's
 * o-series, GPT-5) refuse `max_tokens` ("Use 'max_completion_tokens' instead") and any
 * `temperature` but the default; older models and most OpenAI-compatible servers (vLLM, Ollama,
 * llama.cpp) expect `max_tokens`. So each provider in `config/triage.json` names its defaults
 * and may override them per model (exact model names).
 */

/** Name of the answer's token budget in a Chat Completions request. */
export const TOKEN_LIMIT_PARAMETERS = ['max_tokens', 'max_completion_tokens'] as const;
export type TokenLimitParameter = (typeof TOKEN_LIMIT_PARAMETERS)[number];

/** Sampling parameters a request may carry, and their accepted ranges. */
export const SAMPLING_PARAMETERS = { temperature: [0, 2], top_p: [0, 1] } as const;
export type SamplingParameters = Partial<Record<keyof typeof SAMPLING_PARAMETERS, number>>;

/** How requests for one model are written. */
export interface ModelRequestSettings {
  /** @defaultValue `max_tokens` (the only name Anthropic's Messages API knows) */
  tokenLimitParameter: TokenLimitParameter;
  /** Sent as they are; empty for models that accept only their defaults. @defaultValue `{ temperature: 0 }` */
  sampling: SamplingParameters;
}

/** A provider's defaults and its per-model overrides. */
export interface ProviderRequestSettings extends ModelRequestSettings {
  /** Keyed by the provider's exact model name; a field left out keeps the provider's default. */
  models: Readonly<Record<string, Partial<ModelRequestSettings>>>;
}

export const DEFAULT_REQUEST_SETTINGS: ProviderRequestSettings = Object.freeze({
  tokenLimitParameter: 'max_tokens',
  sampling: { temperature: 0 },
  models: {},
});

/** The settings for `model`: its overrides over the provider's defaults. */
export function settingsFor(settings: ProviderRequestSettings, model: string): ModelRequestSettings {
  const own = Object.hasOwn(settings.models, model) ? settings.models[model] : undefined;
  return {
    tokenLimitParameter: own?.tokenLimitParameter ?? settings.tokenLimitParameter,
    sampling: own?.sampling ?? settings.sampling,
  };
}
