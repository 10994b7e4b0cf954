import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { viewKey } from '../../domain/keys/key-view.js';
import { monthOf } from '../../domain/plans/plans.js';
import { REQUEST_METER_INTERVAL_MS } from '../../domain/usage/request-meter.js';
import { invalidRequest } from '../../lib/errors.js';
import { describedPattern } from '../../lib/schema-patterns.js';
import { noQuery } from '../schemas/common.js';
import { keyMe, usageReport } from '../schemas/keys-responses.js';
import { KEY_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import { typed } from '../typed-app.js';

const DAY_MS = 86_400_000;
const DAY = describedPattern('^\\d{4}-\\d{2}-\\d{2}$', 'must be a date as YYYY-MM-DD (UTC)');
const usageQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'string', pattern: DAY },
    to: { type: 'string', pattern: DAY },
  },
} as const;

/** Parses an inclusive [from, to] day range into [start, end) instants, defaulting to this month. */
export function usageRange(query: { from?: string; to?: string }, now: Date): { from: Date; to: Date } {
  const from = new Date(`${query.from ?? monthOf(now)}T00:00:00Z`);
  const toDay = query.to
    ? new Date(`${query.to}T00:00:00Z`)
    : new Date(`${now.toISOString().slice(0, 10)}T00:00:00Z`);
  const to = new Date(toDay.getTime() + DAY_MS);
  const errors = [];
  if (Number.isNaN(from.getTime()))
    errors.push({ path: '/querystring/from', message: 'is not a valid date' });
  if (Number.isNaN(to.getTime())) errors.push({ path: '/querystring/to', message: 'is not a valid date' });
  if (errors.length === 0 && from >= to)
    errors.push({ path: '/querystring/from', message: 'must not be after to' });
  if (errors.length === 0 && to.getTime() - from.getTime() > 366 * DAY_MS)
    errors.push({ path: '/querystring/to', message: 'the range may span at most 366 days' });
  if (errors.length > 0) throw invalidRequest(errors);
  return { from, to };
}

/** `GET /api/v1/keys/me` and `GET /api/v1/usage` (docs/triage.md#usage), both with `usage:read`. */
export function selfServiceRoutes(
  app: FastifyInstance,
  deps: Pick<AppDeps, 'clock' | 'config' | 'quota' | 'usageReports'>,
): void {
  const config = { scope: 'usage:read' as const };

  const keyMeSchema = {
    summary: 'The calling key',
    querystring: noQuery,
    response: responses({ 200: keyMe }, KEY_ROUTE_ERRORS),
  };
  typed(app).get('/keys/me', { config, schema: keyMeSchema }, async (req, reply) => {
    // Served from the verified key (cached): this route costs no database round trip.
    // It describes the credential itself: no shared cache may keep it (docs/api.md#keys).
    void reply.header('Cache-Control', 'no-store');
    const k = req.apiKey;
    const now = deps.clock();
    return {
      ...viewKey({ ...k, state: k.state, revokedAt: null }, k.workspace.rotationPolicyDays, now),
      // The key comes from the process's cache (up to KEY_CACHE_TTL_MS old), whose lastUsedAt
      // was written by batched counters (every second): it includes every use before asOf.
      asOf: new Date(now.getTime() - deps.config.keyCacheTtlMs - REQUEST_METER_INTERVAL_MS).toISOString(),
      workspace: {
        id: k.workspace.id,
        name: k.workspace.name,
        plan: req.plan.plan,
        trialDaysLeft: req.plan.trialDaysLeft,
      },
    };
  });

  const usageSchema = {
    summary: 'Usage of the key and of its workspace',
    querystring: usageQuery,
    response: responses({ 200: usageReport }, KEY_ROUTE_ERRORS),
  };
  typed(app).get('/usage', { config, schema: usageSchema }, async (req) => {
    const now = deps.clock();
    const { from, to } = usageRange(req.query, now);
    const k = req.apiKey;
    const [key, workspace, quota] = await Promise.all([
      deps.usageReports.usageSeries({ column: 'key_id', id: k.id }, from, to),
      deps.usageReports.usageSeries({ column: 'workspace_id', id: k.workspace.id }, from, to),
      deps.quota.usage(k.workspace.id),
    ]);
    const limit = req.plan.limits.aiCallsPerMonth;
    return {
      // Request counts are written in batches every second by each process: they include every
      // request before asOf (AI calls, tokens and spend are written with the call: exact).
      asOf: new Date(now.getTime() - REQUEST_METER_INTERVAL_MS).toISOString(),
      from: from.toISOString().slice(0, 10),
      to: new Date(to.getTime() - DAY_MS).toISOString().slice(0, 10),
      key: { id: k.id, label: k.label, ...key.totals, daily: key.daily },
      workspace: {
        id: k.workspace.id,
        plan: req.plan.plan,
        ...workspace.totals,
        aiCallLimit: limit,
        aiCallsThisMonth: quota.used,
        aiCallsRemaining: Math.max(0, limit - quota.used - quota.reserved),
        daily: workspace.daily,
      },
    };
  });
}
