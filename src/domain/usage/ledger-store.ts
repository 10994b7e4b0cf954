import type { Db } from '../../db/pool.js';
import { sql, type SqlFragment } from '../../db/sql.js';
import { picosToMicros, type LedgerEntry } from './ledger.js';

/**
 * The usage ledger's table, `usage_ledger`: one row per model call (ledger.ts says what a row
 * holds). Rows are written by {@link recordModelCalls}, or inside the statement that stores a
 * triage answer with its charge (`triage-store.ts`) through {@link insertLedgerRowsFrom}; the
 * reports read them (usage-report-store.ts).
 */

/** Appends entries in one statement; an entry without `at` is dated now. */
export async function recordModelCalls(db: Db, entries: readonly LedgerEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const now = new Date();
  const col = <T>(f: (e: LedgerEntry) => T): T[] => entries.map(f);
  await db.query(sql`
    INSERT INTO usage_ledger (workspace_id, key_id, request_id, tier, catalog_model, provider_model,
                              input_tokens, output_tokens, cost_micros, cost_picos, ai_call, created_at)
    SELECT * FROM unnest(${col((e) => e.workspaceId)}::uuid[], ${col((e) => e.keyId)}::uuid[],
                         ${col((e) => e.requestId)}::text[], ${col((e) => e.tier)}::text[],
                         ${col((e) => e.catalogModel)}::text[], ${col((e) => e.providerModel)}::text[],
                         ${col((e) => e.inputTokens)}::int[], ${col((e) => e.outputTokens)}::int[],
                         ${col((e) => picosToMicros(e.costPicos).toString())}::bigint[],
                         ${col((e) => e.costPicos.toString())}::bigint[],
                         ${col((e) => e.aiCall)}::boolean[], ${col((e) => e.at ?? now)}::timestamptz[])`);
}

/**
 * A data-modifying CTE body inserting ledger rows from `rows`, a fragment selecting, in order,
 * workspace_id, key_id, request_id, tier, catalog_model, provider_model, input_tokens,
 * output_tokens, cost_micros, cost_picos, ai_call and created_at (`ledgerCallColumns` of
 * ledger.ts gives the per-call columns). For the statements that store triage answers with
 * their charge in one commit (`triage-store.ts`).
 */
export function insertLedgerRowsFrom(rows: SqlFragment): SqlFragment {
  return sql`INSERT INTO usage_ledger (workspace_id, key_id, request_id, tier, catalog_model, provider_model,
                            input_tokens, output_tokens, cost_micros, cost_picos, ai_call, created_at)
  ${rows}`;
}
