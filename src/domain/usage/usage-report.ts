import type { Db } from '../../db/pool.js';
import { microsToUsd, picosToMicros } from './ledger.js';
import { keyTotals, ledgerLines, usageByDay, type UsageScope } from './usage-report-store.js';

/** Totals over a period, as `/api/v1/usage` and the console show them (docs/triage.md#usage). */
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
  db: Db,
  scope: UsageScope,
  from: Date,
  to: Date,
): Promise<{ totals: UsageTotals; daily: DailyUsage[] }> {
  const rows = await usageByDay(db, scope, from, to);
  const totals = empty();
  let spend = 0n;
  const daily = rows.map((r) => {
    const micros = picosToMicros(r.spendPicos);
    const d: DailyUsage = {
      date: r.day,
      requests: r.requests,
      aiCalls: r.aiCalls,
      inputTokens: r.inputTokens,
      outputTokens: r.outputTokens,
      spendMicros: micros.toString(),
      spendUsd: microsToUsd(micros),
    };
    totals.requests += d.requests;
    totals.aiCalls += d.aiCalls;
    totals.inputTokens += d.inputTokens;
    totals.outputTokens += d.outputTokens;
    spend += BigInt(r.spendPicos);
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
  db: Db,
  workspaceId: string,
  from: Date,
  to: Date,
): Promise<Statement> {
  let picos = 0n;
  let aiCalls = 0;
  let tokens = 0;
  const lines = (await ledgerLines(db, workspaceId, from, to)).map((r) => {
    picos += BigInt(r.spendPicos);
    aiCalls += r.aiCalls;
    tokens += r.inputTokens + r.outputTokens;
    return {
      keyId: r.keyId,
      tier: r.catalogModel,
      requests: 0,
      aiCalls: r.aiCalls,
      inputTokens: r.inputTokens,
      outputTokens: r.outputTokens,
      spendMicros: picosToMicros(r.spendPicos).toString(),
      spendUsd: microsToUsd(picosToMicros(r.spendPicos)),
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
  db: Db,
  workspaceId: string,
): Promise<Map<string, { requests: number; tokens: number; spendUsd: string }>> {
  return new Map(
    (await keyTotals(db, workspaceId)).map((r) => [
      r.keyId,
      { requests: r.requests, tokens: r.tokens, spendUsd: microsToUsd(picosToMicros(r.spendPicos)) },
    ]),
  );
}

/**
 * The usage reports bound once to the pool, so the HTTP edge never sees it: the statement, the
 * daily series and the per-key totals, each the function of the same name above.
 */
export interface UsageReports {
  monthlyStatement(workspaceId: string, from: Date, to: Date): Promise<Statement>;
  usageSeries(scope: UsageScope, from: Date, to: Date): Promise<{ totals: UsageTotals; daily: DailyUsage[] }>;
  perKeyTotals(
    workspaceId: string,
  ): Promise<Map<string, { requests: number; tokens: number; spendUsd: string }>>;
}

/** {@link UsageReports} over `db`: plain delegation. */
export function createUsageReports(db: Db): UsageReports {
  return {
    monthlyStatement: (workspaceId, from, to) => monthlyStatement(db, workspaceId, from, to),
    usageSeries: (scope, from, to) => usageSeries(db, scope, from, to),
    perKeyTotals: (workspaceId) => perKeyTotals(db, workspaceId),
  };
}
