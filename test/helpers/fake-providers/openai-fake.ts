/**
 * Fake OpenAI Chat Completions endpoint: real response envelopes (`chat.completion` with
 * choices, usage details, system_fingerprint), real error bodies `{"error": {message, type,
 * param, code}}`, and the real rate-limit headers (`x-ratelimit-*`, `retry-after`).
 */
import {
  DEFAULT_ANSWER,
  startFakeServer,
  type FakeServer,
  type FakeStep,
  type Renderer,
} from './fake-server.js';

function rateHeaders(remaining: number): Record<string, string> {
  return {
    'x-request-id': `req_${Math.random().toString(16).slice(2, 18)}`,
    'openai-processing-ms': '412',
    'x-ratelimit-limit-requests': '500',
    'x-ratelimit-remaining-requests': String(remaining),
    'x-ratelimit-reset-requests': remaining === 0 ? '1s' : '120ms',
    'x-ratelimit-limit-tokens': '200000',
    'x-ratelimit-remaining-tokens': remaining === 0 ? '0' : '199100',
    'x-ratelimit-reset-tokens': remaining === 0 ? '6m0s' : '270ms',
  };
}

function error(
  status: number,
  message: string,
  type: string,
  code: string | null,
  headers: Record<string, string> = {},
  param: string | null = null,
) {
  return {
    status,
    headers: { ...rateHeaders(499), ...headers },
    body: JSON.stringify({ error: { message, type, param, code } }),
  };
}

/** Models of the reasoning class (o-series, GPT-5): they take only their default sampling. */
export const REASONING_MODEL = /^(o\d|gpt-5)/;

/**
 * What the real API answers a reasoning-class model's request that carries `max_tokens` or a
 * non-default sampling parameter: 400 with `unsupported_parameter` / `unsupported_value`.
 */
function refusedParameters(body: Record<string, unknown>, model: string) {
  if (!REASONING_MODEL.test(model)) return null;
  if (body.max_tokens !== undefined) {
    return error(
      400,
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      'invalid_request_error',
      'unsupported_parameter',
      {},
      'max_tokens',
    );
  }
  for (const name of ['temperature', 'top_p']) {
    if (body[name] !== undefined && body[name] !== 1) {
      return error(
        400,
        `Unsupported value: '${name}' does not support ${String(body[name])} with this model. Only the default (1) value is supported.`,
        'invalid_request_error',
        'unsupported_value',
        {},
        name,
      );
    }
  }
  return null;
}

function completion(content: string, usage: [number, number], model: string, finish = 'stop') {
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2, 14)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: `${model}-2025-04-14`,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: finish,
      },
    ],
    usage: {
      prompt_tokens: usage[0],
      completion_tokens: usage[1],
      total_tokens: usage[0] + usage[1],
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_6f2eabb9a5',
  };
}

export const renderOpenAi: Renderer = (step, request) => {
  const model = (request.body as { model?: string }).model ?? 'gpt-4.1-mini';
  const refused = refusedParameters(request.body as Record<string, unknown>, model);
  if (refused) return refused;
  switch (step.kind) {
    case 'success': {
      const content = JSON.stringify({ ...DEFAULT_ANSWER, ...step.answer });
      return {
        status: 200,
        headers: rateHeaders(499),
        body: JSON.stringify(completion(content, step.usage ?? [812, 64], model)),
      };
    }
    case 'schema_violation': {
      const content = JSON.stringify({
        priority: 'URGENT',
        recommendedAction: 'PATCH_IMMEDIATELY',
        reasoning: 'x',
      });
      return {
        status: 200,
        headers: rateHeaders(499),
        body: JSON.stringify(completion(content, [812, 21], model)),
      };
    }
    case 'malformed_json':
      return {
        status: 200,
        headers: rateHeaders(499),
        body: '{"id":"chatcmpl-abc","object":"chat.completion","choices":[{"index":0,"message":{"role":"assist',
      };
    case 'rate_limited': {
      const headers: Record<string, string> = { ...rateHeaders(0) };
      if (step.retryAfterSeconds !== undefined) headers['retry-after'] = String(step.retryAfterSeconds);
      if (step.retryAfterMs !== undefined) headers['retry-after-ms'] = String(step.retryAfterMs);
      if (step.retryAfterDate !== undefined) headers['retry-after'] = step.retryAfterDate;
      return error(
        429,
        `Rate limit reached for ${model} in organization org-fake on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.`,
        'requests',
        'rate_limit_exceeded',
        headers,
      );
    }
    case 'insufficient_quota':
      return error(
        429,
        'You exceeded your current quota, please check your plan and billing details.',
        'insufficient_quota',
        'insufficient_quota',
      );
    case 'server_error':
      return error(
        500,
        'The server had an error while processing your request. Sorry about that!',
        'server_error',
        null,
      );
    case 'overloaded':
      return error(503, 'The engine is currently overloaded, please try again later.', 'server_error', null);
    case 'auth': {
      const key = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
      // The real API echoes a masked key; this echoes it whole to prove the adapter redacts it.
      return error(
        401,
        `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        'invalid_request_error',
        'invalid_api_key',
      );
    }
  }
};

export function startOpenAiFake(steps?: FakeStep[]): Promise<FakeServer> {
  return startFakeServer(renderOpenAi, steps);
}
