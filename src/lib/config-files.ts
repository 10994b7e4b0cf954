import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type JSONSchemaType } from 'ajv';

/**
 * The files of `config/` (plans, model catalog, triage chain), their shapes and the one Ajv
 * check of each: a file that does not match refuses the start with a message naming the file
 * and the bad field (STYLE: configuration), instead of a cast that fails later, far away.
 */

/** A plan's limits as the process uses them (docs/api.md#plans-and-quotas). */
export interface PlanLimits {
  aiCallsPerMonth: number;
  requestsPerMinute: number;
  batchMaxItems: number;
  scanMaxBytes: number;
}

/** `config/plans.json` (or PLANS_FILE): `scanMaxBytes` null means the SCAN_MAX_BYTES setting. */
export interface PlansFile {
  trialDays: number;
  plans: Record<'free' | 'service', Omit<PlanLimits, 'scanMaxBytes'> & { scanMaxBytes: number | null }>;
}

/** One model of the catalog of docs/triage.md#model-catalog (`config/models.json`). */
export interface ModelCatalogEntry {
  id: string;
  name: string;
  stage: string;
  default: boolean;
  routineTier: boolean;
  description: string;
  inputPricePerMillion: string;
  outputPricePerMillion: string;
  minimumTier: string;
  max: number;
}

/** Router thresholds (docs/triage.md#routing). */
export interface TriageThresholdsFile {
  confidence: number;
  epss: number;
  cvss: number;
}

/** A remote provider endpoint as written in `config/triage.json`; optional fields have defaults. */
export interface TriageProviderFile {
  kind: 'openai-compatible' | 'anthropic';
  baseUrl: string;
  apiKeyEnv: string;
  baseUrlEnv?: string;
  timeoutMs?: number;
  maxRetries?: number;
  maxOutputTokens?: number;
  requestsPerMinute: number;
  tokensPerMinute: number;
  /** The window both limits are counted over (default a minute: 60000). */
  rateLimitWindowMs?: number;
  /** `max_tokens` or `max_completion_tokens` (the engine's `model-settings.ts` says which fits). */
  tokenLimitParameter?: string;
  sampling?: { temperature?: number; top_p?: number };
  /** Per exact model name: overrides of the two above. */
  models?: Record<
    string,
    { tokenLimitParameter?: string; sampling?: { temperature?: number; top_p?: number } }
  >;
}

/** `config/triage.json` (or TRIAGE_CONFIG_FILE): the escalation chain, thresholds, endpoints. */
export interface TriageFile {
  thresholds: TriageThresholdsFile;
  localModel: string;
  chain: { tier: string; provider: string; model: string; billedAs: string }[];
  providers: Record<string, TriageProviderFile>;
  rateLimitRedisUrlEnv?: string;
}

const text = { type: 'string', minLength: 1 } as const;
const count = { type: 'integer', minimum: 0 } as const;
const comment = { $comment: { type: 'string', nullable: true } } as const;

const planSchema = {
  type: 'object',
  required: ['aiCallsPerMonth', 'requestsPerMinute', 'batchMaxItems', 'scanMaxBytes'],
  additionalProperties: false,
  properties: {
    aiCallsPerMonth: count,
    requestsPerMinute: count,
    batchMaxItems: count,
    scanMaxBytes: { type: 'integer', minimum: 0, nullable: true },
  },
} as const;

const plansSchema: JSONSchemaType<PlansFile> = {
  type: 'object',
  required: ['trialDays', 'plans'],
  additionalProperties: false,
  properties: {
    ...comment,
    trialDays: count,
    plans: {
      type: 'object',
      required: ['free', 'service'],
      additionalProperties: false,
      properties: { free: planSchema, service: planSchema },
    },
  },
} as unknown as JSONSchemaType<PlansFile>;

const modelsSchema: JSONSchemaType<{ models: ModelCatalogEntry[] }> = {
  type: 'object',
  required: ['models'],
  additionalProperties: false,
  properties: {
    ...comment,
    models: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: [
          'id',
          'name',
          'stage',
          'default',
          'routineTier',
          'description',
          'inputPricePerMillion',
          'outputPricePerMillion',
          'minimumTier',
          'max',
        ],
        properties: {
          id: text,
          name: text,
          stage: text,
          default: { type: 'boolean' },
          routineTier: { type: 'boolean' },
          description: { type: 'string' },
          // Prices are decimal strings (exact money arithmetic), never floats.
          inputPricePerMillion: { type: 'string', pattern: '^\\d+(\\.\\d+)?$' },
          outputPricePerMillion: { type: 'string', pattern: '^\\d+(\\.\\d+)?$' },
          minimumTier: { type: 'string', enum: ['free', 'trial', 'service'] },
          max: { type: 'integer', minimum: 1 },
        },
      },
    },
  },
} as unknown as JSONSchemaType<{ models: ModelCatalogEntry[] }>;

const share = { type: 'number', minimum: 0, maximum: 1 } as const;
const tokenLimitParameter = {
  type: 'string',
  enum: ['max_tokens', 'max_completion_tokens'],
  nullable: true,
} as const;
const sampling = {
  type: 'object',
  nullable: true,
  additionalProperties: false,
  properties: { temperature: { type: 'number', minimum: 0, maximum: 2 }, top_p: share },
} as const;

const triageSchema: JSONSchemaType<TriageFile> = {
  type: 'object',
  required: ['thresholds', 'localModel', 'chain', 'providers'],
  additionalProperties: false,
  properties: {
    ...comment,
    thresholds: {
      type: 'object',
      required: ['confidence', 'epss', 'cvss'],
      additionalProperties: false,
      properties: { confidence: share, epss: share, cvss: { type: 'number', minimum: 0, maximum: 10 } },
    },
    localModel: text,
    chain: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['tier', 'provider', 'model', 'billedAs'],
        additionalProperties: false,
        properties: { tier: text, provider: text, model: text, billedAs: text },
      },
    },
    providers: {
      type: 'object',
      required: [],
      additionalProperties: {
        type: 'object',
        required: ['kind', 'baseUrl', 'apiKeyEnv', 'requestsPerMinute', 'tokensPerMinute'],
        additionalProperties: false,
        properties: {
          kind: { type: 'string', enum: ['openai-compatible', 'anthropic'] },
          baseUrl: text,
          apiKeyEnv: text,
          baseUrlEnv: { ...text, nullable: true },
          timeoutMs: { type: 'number', minimum: 100, maximum: 600_000, nullable: true },
          maxRetries: { type: 'integer', minimum: 0, maximum: 10, nullable: true },
          maxOutputTokens: { type: 'integer', minimum: 64, maximum: 32_768, nullable: true },
          requestsPerMinute: { type: 'number', minimum: 1, maximum: 1e7 },
          tokensPerMinute: { type: 'number', minimum: 1, maximum: 1e10 },
          rateLimitWindowMs: { type: 'integer', minimum: 1_000, maximum: 3_600_000, nullable: true },
          tokenLimitParameter,
          sampling,
          models: {
            type: 'object',
            nullable: true,
            additionalProperties: {
              type: 'object',
              additionalProperties: false,
              properties: { tokenLimitParameter, sampling },
            },
          },
        },
      },
    },
    rateLimitRedisUrlEnv: { ...text, nullable: true },
  },
} as unknown as JSONSchemaType<TriageFile>;

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = {
  plans: ajv.compile(plansSchema),
  models: ajv.compile(modelsSchema),
  triage: ajv.compile(triageSchema),
};

/** Which file of `config/` a document is, hence its schema. */
export type ConfigFileKind = keyof typeof validators;
type Shapes = { plans: PlansFile; models: { models: ModelCatalogEntry[] }; triage: TriageFile };

/**
 * Reads and checks one configuration file. Problems go to `problems` as `<label>: <field> <message>`
 * (`PLANS_FILE: plans.free.batchMaxItems must be integer`); the result is null when there were any.
 */
export function readConfigFile<K extends ConfigFileKind>(
  kind: K,
  file: string,
  label: string,
  problems: string[],
): Shapes[K] | null {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    problems.push(`${label}: cannot read ${file} (${(err as Error).message.split('\n')[0]})`);
    return null;
  }
  const validate = validators[kind];
  if (validate(raw)) return raw as Shapes[K];
  for (const e of validate.errors ?? []) problems.push(`${label}: ${describe(e)}`);
  return null;
}

/** `plans.free.batchMaxItems must be integer`, `providers.openai has unknown field "timeout"`. */
function describe(e: ErrorObject): string {
  const at = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('')
    .replace(/^\./, '');
  const where = at === '' ? 'the file' : at;
  if (e.keyword === 'additionalProperties')
    return `${where} has unknown field "${String(e.params.additionalProperty)}"`;
  if (e.keyword === 'required')
    return `${at === '' ? '' : `${at}.`}${String(e.params.missingProperty)} is required`;
  return `${where} ${e.message ?? 'is invalid'}`;
}
