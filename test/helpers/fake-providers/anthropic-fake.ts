/**
 * Fake Anthropic Messages endpoint: real `message` objects (content blocks, stop_reason, usage),
 * real error bodies `{"type": "error", "error": {type, message}}` including 529
 * `overloaded_error`, and the real headers (`anthropic-ratelimit-*`, `retry-after`, `request-id`).
 */
import {
  DEFAULT_ANSWER,
  startFakeServer,
  type FakeServer,
  type FakeStep,
  type Renderer,
} from './fake-server.js';

function rateHeaders(remaining: number): Record<string, string> {
  const reset = new Date(Date.now() + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    'request-id': `req_${Math.random().toString(36).slice(2, 26)}`,
    'anthropic-ratelimit-requests-limit': '50',
    'anthropic-ratelimit-requests-remaining': String(remaining),
    'anthropic-ratelimit-requests-reset': reset,
    'anthropic-ratelimit-input-tokens-limit': '40000',
    'anthropic-ratelimit-input-tokens-remaining': remaining === 0 ? '0' : '39000',
    'anthropic-ratelimit-input-tokens-reset': reset,
  };
}

function error(status: number, type: string, message: string, headers: Record<string, string> = {}) {
  return {
    status,
    headers: { ...rateHeaders(49), ...headers },
    body: JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_011CTfake' }),
  };
}

function message(model: string, content: unknown[], usage: [number, number], stop = 'tool_use') {
  return {
    id: `msg_01${Math.random().toString(36).slice(2, 24)}`,
    type: 'message',
    role: 'assistant',
    model: `${model}-20250929`,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: {
      input_tokens: usage[0],
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: usage[1],
      service_tier: 'standard',
    },
  };
}

const toolUse = (input: unknown) => ({
  type: 'tool_use',
  id: 'toolu_01A09q90qw90lq917835lq9',
  name: 'record_triage',
  input,
});

export const renderAnthropic: Renderer = (step, request) => {
  const model = (request.body as { model?: string }).model ?? 'claude-sonnet-4-5';
  switch (step.kind) {
    case 'success':
      return {
        status: 200,
        headers: rateHeaders(49),
        body: JSON.stringify(
          message(model, [toolUse({ ...DEFAULT_ANSWER, ...step.answer })], step.usage ?? [1034, 118]),
        ),
      };
    case 'schema_violation':
      return {
        status: 200,
        headers: rateHeaders(49),
        body: JSON.stringify(
          message(
            model,
            [
              { type: 'text', text: 'I think this is probably fine.' },
              toolUse({ priority: 'SOON', confidenceScore: 'high' }),
            ],
            [1034, 40],
          ),
        ),
      };
    case 'malformed_json':
      return {
        status: 200,
        headers: rateHeaders(49),
        body: '{"id":"msg_01","type":"message","content":[{"type":"tool_use",',
      };
    case 'rate_limited': {
      const headers: Record<string, string> = { ...rateHeaders(0) };
      if (step.retryAfterSeconds !== undefined) headers['retry-after'] = String(step.retryAfterSeconds);
      if (step.retryAfterMs !== undefined) headers['retry-after-ms'] = String(step.retryAfterMs);
      if (step.retryAfterDate !== undefined) headers['retry-after'] = step.retryAfterDate;
      return error(
        429,
        'rate_limit_error',
        'This request would exceed the rate limit for your organization of 50 requests per minute.',
        headers,
      );
    }
    case 'insufficient_quota':
      return error(
        400,
        'invalid_request_error',
        'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
      );
    case 'server_error':
      return error(500, 'api_error', 'Internal server error');
    case 'overloaded':
      return error(529, 'overloaded_error', 'Overloaded');
    case 'auth':
      return error(401, 'authentication_error', `invalid x-api-key: ${String(request.headers['x-api-key'])}`);
  }
};

export function startAnthropicFake(steps?: FakeStep[]): Promise<FakeServer> {
  return startFakeServer(renderAnthropic, steps);
}
