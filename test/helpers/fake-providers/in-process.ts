/**
 * In-process fake providers for router tests (STYLE: "the router is tested with in-process
 * fakes"). Each fake answers from a script, one step per call, and records what it was asked.
 */
import type {
  Clock,
  Provider,
  ProviderErrorKind,
  ProviderInput,
  ProviderResult,
  TriageAnswer,
} from '../../../src/domain/triage-engine/types.js';

export type ScriptStep =
  ProviderResult | ((input: ProviderInput) => ProviderResult | Promise<ProviderResult>);

export interface ScriptedProvider extends Provider {
  readonly calls: ProviderInput[];
}

/** A provider that plays `steps` in order; once they run out it repeats the last one. */
export function scriptedProvider(name: string, steps: ScriptStep[], delayMs = 0): ScriptedProvider {
  const calls: ProviderInput[] = [];
  return {
    name,
    calls,
    async triage(input) {
      calls.push(input);
      const step = steps[Math.min(calls.length - 1, steps.length - 1)];
      if (step === undefined) throw new Error(`scriptedProvider ${name}: empty script`);
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      return typeof step === 'function' ? step(input) : step;
    },
  };
}

export const sampleAnswer = (over: Partial<TriageAnswer> = {}): TriageAnswer => ({
  priority: 'MEDIUM',
  recommendedAction: 'PATCH_SCHEDULED',
  reasoning: 'scripted',
  confidenceScore: 0.9,
  severityOverride: null,
  ...over,
});

export function answered(
  over: Partial<TriageAnswer> = {},
  tokens: [number, number] = [100, 20],
): ProviderResult {
  return {
    ok: true,
    answer: sampleAnswer(over),
    usage: { inputTokens: tokens[0], outputTokens: tokens[1] },
    raw: {},
  };
}

export function failed(kind: ProviderErrorKind, tokens?: [number, number]): ProviderResult {
  const retryable = kind === 'rate_limited' || kind === 'unavailable' || kind === 'timeout';
  return {
    ok: false,
    error: { kind, retryable, message: `scripted ${kind}` },
    ...(tokens === undefined ? {} : { usage: { inputTokens: tokens[0], outputTokens: tokens[1] } }),
  };
}

/** A clock that advances `stepMs` on every read, so latencies are exact in tests. */
export function steppingClock(startMs = Date.UTC(2026, 10, 21, 12, 0, 0, 123), stepMs = 5): Clock {
  let now = startMs - stepMs;
  return { now: () => (now += stepMs) };
}
