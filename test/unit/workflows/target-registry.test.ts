import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TargetKind } from '../../../src/domain/workflows/targets/target-kind.js';
import type * as Registry from '../../../src/domain/workflows/targets/registry.js';
import type * as WorkflowSchemas from '../../../src/api/schemas/workflows.js';
import type * as WorkflowResponses from '../../../src/api/schemas/workflows-responses.js';
import type * as ScansResponses from '../../../src/api/schemas/scans-responses.js';
import type * as RateLimits from '../../../src/domain/workflows/rate-limit.js';

/**
 * Every list of workflow target kinds derives from the registry: a kind added there (one folder,
 * one registry line) appears in the request and response schemas, the console's preview schema,
 * the default rate limits and the service's setup, with nothing else edited. Proved by adding a
 * made-up kind to the registry module and loading the modules that list kinds.
 */
const REGISTRY = '../../../src/domain/workflows/targets/registry.js';

const carrierPigeon: TargetKind<'pigeon', { kind: 'pigeon' }, { kind: 'pigeon'; loft: string }> = {
  kind: 'pigeon',
  label: 'Pigeon',
  requestSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['kind', 'loft'],
    properties: { kind: { const: 'pigeon' }, loft: { type: 'string' } },
  },
  viewProperties: { loft: { type: 'string' } },
  defaultRateLimit: { requests: 3, perSeconds: 60 },
  summaryMax: 80,
  priorityAsLabel: false,
  setup: () => ({ target: { kind: 'pigeon' }, credential: null, errors: [] }),
  delivery: { mode: 'event', send: async () => ({ ok: true, status: 200 }) },
};

afterEach(() => {
  vi.doUnmock(REGISTRY);
  vi.resetModules();
});

/** Loads `path` with the registry holding one more kind. */
async function withPigeon<T>(path: string): Promise<T> {
  vi.resetModules();
  vi.doMock(REGISTRY, async (importOriginal) => {
    const real = await importOriginal<typeof Registry>();
    const TARGETS = { ...real.TARGETS, pigeon: carrierPigeon };
    return {
      ...real,
      TARGETS,
      WORKFLOW_KINDS: Object.keys(TARGETS),
      targetKind: (k: keyof typeof TARGETS) => TARGETS[k],
    };
  });
  return (await import(path)) as T;
}

describe('the target registry', () => {
  it('lists jira, github, webhook and slack, each with its own folder entry', async () => {
    const { TARGETS, WORKFLOW_KINDS } = await import(REGISTRY);
    expect(WORKFLOW_KINDS).toEqual(['jira', 'github', 'webhook', 'slack']);
    for (const k of WORKFLOW_KINDS as (keyof typeof TARGETS)[]) expect(TARGETS[k].kind).toBe(k);
  });

  it('a kind added to the registry alone reaches every schema that lists kinds', async () => {
    const schemas = await withPigeon<typeof WorkflowSchemas>('../../../src/api/schemas/workflows.js');
    const target = schemas.createWorkflowBody.properties.target;
    expect(target.properties.kind.enum).toContain('pigeon');
    expect(target.allOf.map((c) => c.if.properties.kind.const)).toEqual([
      'jira',
      'github',
      'webhook',
      'slack',
      'pigeon',
    ]);
    const pigeon = target.allOf.at(-1)!.then as unknown as {
      required: string[];
      properties: Record<string, unknown>;
    };
    expect(pigeon.required).toEqual(['kind', 'loft']);
    expect(Object.keys(pigeon.properties)).toEqual(['kind', 'loft', 'rateLimit']);
    expect(schemas.rateLimitSchema.description).toContain('Pigeon 3 per 60 s');

    const responses = await withPigeon<typeof WorkflowResponses>(
      '../../../src/api/schemas/workflows-responses.js',
    );
    const view = responses.workflowView.properties;
    expect(view.kind.enum).toContain('pigeon');
    expect(view.target.properties).toHaveProperty('loft');

    const cases = await withPigeon<typeof ScansResponses>('../../../src/api/schemas/scans-responses.js');
    expect(JSON.stringify(cases)).toContain('"pigeon"');
  });

  it('a kind added to the registry alone has its default rate limit', async () => {
    const limits = await withPigeon<typeof RateLimits>('../../../src/domain/workflows/rate-limit.js');
    expect(limits.DEFAULT_RATE_LIMITS).toHaveProperty('pigeon', { requests: 3, perSeconds: 60 });
    expect(limits.rateLimitOf({ kind: 'pigeon' } as never)).toEqual({ requests: 3, perSeconds: 60 });
  });
});
