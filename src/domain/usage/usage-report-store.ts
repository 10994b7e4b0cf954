import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';

/**
 * The usage reports' reads (usage-report.ts and the workspace summary sum and round these):
 * per-day series over `key_request_counters` and `usage_ledger`, ledger lines, per-key totals
 * (over the workspace's `api_keys`) and a workspace's ledger totals. Spend is in picodollars.
 */

/** Whose usage a series is: one key or one workspace. */
export interface UsageScope {
  column: 'key_id' | 'workspace_id';
  id: string;
}

/** Usage of one UTC day; spend in picodollars, as a decimal string (exact). */
export interface UsageDayRow {
  day: string;
  requests: number;
  aiCalls: number;
  inputTokens: number;
  outputTokens: number;
  spendPicos: string;
}

/**
 * One row per UTC day of [from, to), days without use included: requests from the per-key
 * counters, model calls, tokens and spend from the ledger.
 */
export async function usageByDay(db: Db, scope: UsageScope, from: Date, to: Date): Promise<UsageDayRow[]> {
  const column = sql.identifier(scope.column, ['key_id', 'workspace_id']);
  const res = await db.query<{
    day: string;
    requests: string;
    ai_calls: string;
    input_tokens: string;
    output_tokens: string;
    spend: string;
  }>(sql`
    WITH days AS (
      SELECT d::date AS day FROM generate_series(${from}::date, (${to}::date - 1), interval '1 day') AS d
    ), req AS (
      SELECT day, sum(requests) AS requests FROM key_request_counters
       WHERE ${column} = ${scope.id} AND day >= ${from}::date AND day < ${to}::date GROUP BY day
    ), led AS (
      SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*) FILTER (WHERE ai_call) AS ai_calls,
             sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost_picos) AS spend
        FROM usage_ledger
       WHERE ${column} = ${scope.id} AND created_at >= ${from}::date AND created_at < ${to}::date GROUP BY 1
    )
    SELECT to_char(days.day, 'YYYY-MM-DD') AS day,
           COALESCE(req.requests, 0)::text AS requests, COALESCE(led.ai_calls, 0)::text AS ai_calls,
           COALESCE(led.input_tokens, 0)::text AS input_tokens, COALESCE(led.output_tokens, 0)::text AS output_tokens,
           COALESCE(led.spend, 0)::text AS spend
      FROM days LEFT JOIN req ON req.day = days.day LEFT JOIN led ON led.day = days.day
     ORDER BY days.day`);
  return res.rows.map((r) => ({
    day: r.day,
    requests: Number(r.requests),
    aiCalls: Number(r.ai_calls),
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    spendPicos: r.spend,
  }));
}

/** Ledger sums of one key and catalog model over a period; spend in picodollars. */
export interface LedgerLineRow {
  keyId: string;
  catalogModel: string;
  aiCalls: number;
  inputTokens: number;
  outputTokens: number;
  spendPicos: string;
}

/** The ledger of a workspace over [from, to), summed per key and catalog model, in that order. */
export async function ledgerLines(
  db: Db,
  workspaceId: string,
  from: Date,
  to: Date,
): Promise<LedgerLineRow[]> {
  const res = await db.query<{
    key_id: string;
    tier: string;
    ai_calls: string;
    input_tokens: string;
    output_tokens: string;
    spend: string;
  }>(sql`
    SELECT key_id, catalog_model AS tier, count(*) FILTER (WHERE ai_call)::text AS ai_calls,
           sum(input_tokens)::text AS input_tokens, sum(output_tokens)::text AS output_tokens, sum(cost_picos)::text AS spend
      FROM usage_ledger WHERE workspace_id = ${workspaceId} AND created_at >= ${from} AND created_at < ${to}
     GROUP BY key_id, catalog_model ORDER BY key_id, catalog_model`);
  return res.rows.map((r) => ({
    keyId: r.key_id,
    catalogModel: r.tier,
    aiCalls: Number(r.ai_calls),
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    spendPicos: r.spend,
  }));
}

/** Lifetime requests, tokens and spend (picodollars) of one key. */
export interface KeyTotalsRow {
  keyId: string;
  requests: number;
  tokens: number;
  spendPicos: string;
}

/** Lifetime totals of every key of a workspace (zeros for a key never used). */
export async function keyTotals(db: Db, workspaceId: string): Promise<KeyTotalsRow[]> {
  const res = await db.query<{ key_id: string; requests: string; tokens: string; spend: string }>(sql`
    SELECT k.id AS key_id,
           COALESCE((SELECT sum(requests) FROM key_request_counters c WHERE c.key_id = k.id), 0)::text AS requests,
           COALESCE(l.tokens, 0)::text AS tokens, COALESCE(l.spend, 0)::text AS spend
      FROM api_keys k
      LEFT JOIN (SELECT key_id, sum(input_tokens + output_tokens) AS tokens, sum(cost_picos) AS spend
                   FROM usage_ledger WHERE workspace_id = ${workspaceId} GROUP BY key_id) l ON l.key_id = k.id
     WHERE k.workspace_id = ${workspaceId}`);
  return res.rows.map((r) => ({
    keyId: r.key_id,
    requests: Number(r.requests),
    tokens: Number(r.tokens),
    spendPicos: r.spend,
  }));
}

/** A workspace's model tokens of all time and its model spend since `monthStart`, in picodollars. */
export async function workspaceLedgerTotals(
  db: Db,
  workspaceId: string,
  monthStart: string,
): Promise<{ tokens: number; spendPicos: string }> {
  const { rows } = await db.query<{ tokens: string; spend: string }>(
    sql`SELECT (SELECT COALESCE(sum(input_tokens + output_tokens), 0) FROM usage_ledger WHERE workspace_id = ${workspaceId})::text AS tokens,
               (SELECT COALESCE(sum(cost_picos), 0) FROM usage_ledger
                 WHERE workspace_id = ${workspaceId} AND created_at >= ${monthStart}::date)::text AS spend`,
  );
  return { tokens: Number(rows[0]?.tokens ?? 0), spendPicos: rows[0]?.spend ?? '0' };
}
