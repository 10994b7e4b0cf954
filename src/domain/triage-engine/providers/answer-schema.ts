/**
 * The answer every provider must produce, as a JSON Schema usable both as OpenAI's strict
 * `response_format.json_schema` (every property required, `additionalProperties: false`, no
 * numeric bounds, which strict mode does not accept everywhere) and as Anthropic's tool
 * `input_schema`, plus the check applied to what comes back. A value that fails the check is a
 * `schema_violation`, which the router retries once (docs/triage.md#routing).
 */
import { PRIORITIES, RECOMMENDED_ACTIONS, SEVERITIES, type TriageAnswer } from '../types.js';

/** Name of the json_schema (OpenAI) and of the forced tool (Anthropic). */
export const ANSWER_SCHEMA_NAME = 'record_triage';
/** Longer reasoning is treated as a schema violation (a runaway answer). */
export const REASONING_MAX_LENGTH = 4000;

/** The answer schema sent to providers. */
export const TRIAGE_ANSWER_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['priority', 'recommendedAction', 'reasoning', 'confidenceScore', 'severityOverride'],
  properties: {
    priority: { type: 'string', enum: [...PRIORITIES], description: 'How urgently to act.' },
    recommendedAction: { type: 'string', enum: [...RECOMMENDED_ACTIONS] },
    reasoning: { type: 'string', description: 'Two to five plain sentences citing the evidence used.' },
    confidenceScore: { type: 'number', description: 'Confidence in this triage, from 0 to 1.' },
    severityOverride: {
      type: ['string', 'null'],
      enum: [...SEVERITIES, null],
      description: 'A different severity than the submitted one, or null when you agree with it.',
    },
  },
} as const;

const KEYS = new Set<string>(TRIAGE_ANSWER_JSON_SCHEMA.required);

/**
 * Checks a provider's structured output. Confidence outside [0, 1] passes here: clamping it is
 * the safety policy's job (CONFIDENCE_CLAMP), and the router reads it before the policy.
 */
export function parseTriageAnswer(
  value: unknown,
): { ok: true; answer: TriageAnswer } | { ok: false; message: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, message: 'answer is not an object' };
  const v = value as Record<string, unknown>;
  const extra = Object.keys(v).filter((k) => !KEYS.has(k));
  if (extra.length > 0) return { ok: false, message: `unexpected fields: ${extra.join(', ')}` };
  const problems: string[] = [];
  if (!(PRIORITIES as readonly unknown[]).includes(v.priority)) problems.push('priority');
  if (!(RECOMMENDED_ACTIONS as readonly unknown[]).includes(v.recommendedAction))
    problems.push('recommendedAction');
  if (
    typeof v.reasoning !== 'string' ||
    v.reasoning.trim() === '' ||
    v.reasoning.length > REASONING_MAX_LENGTH
  )
    problems.push('reasoning');
  if (typeof v.confidenceScore !== 'number' || !Number.isFinite(v.confidenceScore))
    problems.push('confidenceScore');
  if (v.severityOverride !== null && !(SEVERITIES as readonly unknown[]).includes(v.severityOverride))
    problems.push('severityOverride');
  if (problems.length > 0) return { ok: false, message: `invalid or missing: ${problems.join(', ')}` };
  return { ok: true, answer: v as unknown as TriageAnswer };
}
