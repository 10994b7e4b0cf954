import type { Db, Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { microsToUsd, picosToMicros } from './ledger.js';

/** Totals over a period, as `/api/v1/usage` and the console show them (DECISIONS §5). */
export interface UsageTotals {
  requests: number;
  aiCalls: number;
  inputTokens: number;
  outputTokens: number;
  spendMicros: string;
  spendUsd: string;
}

export interface DailyUsage extends UsageTotals {
  date: string;
}

interface Scope {
  column: 'key_id' | 'workspace_id';
  id: string;
}

const empty = (): UsageTotals => ({
  requests: 0,
  aiCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  spendMicros: '0',
  spendUsd: '0.000000',
});

/**
 * Daily series and totals for one key or one workspace over [from, to) (UTC days).
 * Requests come from the per-key counters, model calls from the ledger.
 */
export async function usageSeries(
  db: Queryable,
  scope: Scope,
  from: Date,
  to: Date,
): Promise<{ totals: UsageTotals; daily: DailyUsage[] }> {
  const res = await db.query<{
    day: string;
    requests: string;
    ai_calls: string;
    input_tokens: string;
    output_tokens: string;
    spend: string;
  }>(
    `WITH days AS (
       SELECT d::date AS day FROM generate_series($2::date, ($3::date - 1), interval '1 day') AS d
     ), req AS (
       SELECT day, sum(requests) AS requests FROM key_request_counters
        WHERE ${scope.column} = $1 AND day >= $2::date AND day < $3::date GROUP BY day
     ), led AS (
       SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*) FILTER (WHERE ai_call) AS ai_calls,
              sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost_picos) AS spend
         FROM usage_ledger
        WHERE ${scope.column} = $1 AND created_at >= $2::date AND created_at < $3::date GROUP BY 1
     )
     SELECT to_char(days.day, 'YYYY-MM-DD') AS day,
            COALESCE(req.requests, 0)::text AS requests, COALESCE(led.ai_calls, 0)::text AS ai_calls,
            COALESCE(led.input_tokens, 0)::text AS input_tokens, COALESCE(led.output_tokens, 0)::text AS output_tokens,
            COALESCE(led.spend, 0)::text AS spend
       FROM days LEFT JOIN req ON req.day = days.day LEFT JOIN led ON led.day = days.day
      ORDER BY days.day`,
    [scope.id, from, to],
  );
  const totals = empty();
  let spend = 0n;
  const daily = res.rows.map((r) => {
    const micros = picosToMicros(r.spend);
    const d: DailyUsage = {
      date: r.day,
      requests: Number(r.requests),
      aiCalls: Number(r.ai_calls),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      spendMicros: micros.toString(),
      spendUsd: microsToUsd(micros),
    };
    totals.requests += d.requests;
    totals.aiCalls += d.aiCalls;
    totals.inputTokens += d.inputTokens;
    totals.outputTokens += d.outputTokens;
    spend += BigInt(r.spend);
    return d;
  });
  // Summed in picos, rounded once: the total is exact even where daily figures round.
  totals.spendMicros = picosToMicros(spend).toString();
  totals.spendUsd = microsToUsd(picosToMicros(spend));
  return { totals, daily };
}

export interface StatementLine extends UsageTotals {
  keyId: string;
  tier: string;
}

/** The monthly statement: AI calls, tokens and spend per key and per model tier, and totals. */
export interface Statement {
  lines: StatementLine[];
  /** Spend summed in picos over every line and rounded once, like every other total. */
  totals: { aiCalls: number; tokens: number; spendMicros: string; spendUsd: string };
}

export async function monthlyStatement(
  db: Queryable,
  workspaceId: string,
  from: Date,
  to: Date,
): Promise<Statement> {
  const res = await db.query<{
    key_id: string;
    tier: string;
    ai_calls: string;
    input_tokens: string;
    output_tokens: string;
    spend: string;
  }>(
    `SELECT key_id, catalog_model AS tier, count(*) FILTER (WHERE ai_call)::text AS ai_calls,
            sum(input_tokens)::text AS input_tokens, sum(output_tokens)::text AS output_tokens, sum(cost_picos)::text AS spend
       FROM usage_ledger WHERE workspace_id = $1 AND created_at >= $2 AND created_at < $3
      GROUP BY key_id, catalog_model ORDER BY key_id, catalog_model`,
    [workspaceId, from, to],
  );
  let picos = 0n;
  let aiCalls = 0;
  let tokens = 0;
  const lines = res.rows.map((r) => {
    picos += BigInt(r.spend);
    aiCalls += Number(r.ai_calls);
    tokens += Number(r.input_tokens) + Number(r.output_tokens);
    return {
      keyId: r.key_id,
      tier: r.tier,
      requests: 0,
      aiCalls: Number(r.ai_calls),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      spendMicros: picosToMicros(r.spend).toString(),
      spendUsd: microsToUsd(picosToMicros(r.spend)),
    };
  });
  // Lines round each to the micro-dollar; the total is exact (it may differ from the sum of
  // the rounded lines by under a micro-dollar per line) and equals the workspace's spend.
  const totals = {
    aiCalls,
    tokens,
    spendMicros: picosToMicros(picos).toString(),
    spendUsd: microsToUsd(picosToMicros(picos)),
  };
  return { lines, totals };
}

/** Lifetime and period totals per key, for the key list (requests, tokens, spend). */
export async function perKeyTotals(
  db: Queryable,
  workspaceId: string,
): Promise<Map<string, { requests: number; tokens: number; spendUsd: string }>> {
  const res = await db.query<{ key_id: string; requests: string; tokens: string; spend: string }>(
    `SELECT k.id AS key_id,
            COALESCE((SELECT sum(requests) FROM key_request_counters c WHERE c.key_id = k.id), 0)::text AS requests,
            COALESCE(l.tokens, 0)::text AS tokens, COALESCE(l.spend, 0)::text AS spend
       FROM api_keys k
       LEFT JOIN (SELECT key_id, sum(input_tokens + output_tokens) AS tokens, sum(cost_picos) AS spend
                    FROM usage_ledger WHERE workspace_id = $1 GROUP BY key_id) l ON l.key_id = k.id
      WHERE k.workspace_id = $1`,
    [workspaceId],
  );
  return new Map(
    res.rows.map((r) => [
      r.key_id,
      {
        requests: Number(r.requests),
        tokens: Number(r.tokens),
        spendUsd: microsToUsd(picosToMicros(r.spend)),
      },
    ]),
  );
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
