/**
 * One entry of the usage ledger, the one type of a ledger row (written by
 * `ledger-store.ts`): one row per model call, priced at the catalog price of the tier that
 * answered, in integers only. Each row keeps the exact cost in pico-dollars
 * (`costPicos` of `domain/triage/pricing.ts`) and that cost rounded half-up to micro-dollars; totals are summed in picos and rounded once, so a
 * statement equals Σ tokens × price to the micro-dollar however many rows it spans.
 * `aiCall` marks the one row per answered request that counts as an AI call.
 */
export interface LedgerEntry {
  workspaceId: string;
  keyId: string;
  requestId: string | null;
  tier: string;
  catalogModel: string;
  providerModel: string;
  inputTokens: number;
  outputTokens: number;
  /** Exact cost in pico-dollars (10^-12 USD). */
  costPicos: bigint;
  aiCall: boolean;
  /** When the call was made; now when absent. */
  at?: Date;
}

/**
 * The per-call columns of ledger rows as parallel arrays, in the order of the `unnest` that
 * inserts them: request_id, tier, catalog_model, provider_model, input_tokens, output_tokens,
 * cost_micros, cost_picos, ai_call.
 */
export function ledgerCallColumns(entries: readonly LedgerEntry[]): unknown[][] {
  const col = <T>(f: (e: LedgerEntry) => T): T[] => entries.map(f);
  return [
    col((e) => e.requestId),
    col((e) => e.tier),
    col((e) => e.catalogModel),
    col((e) => e.providerModel),
    col((e) => e.inputTokens),
    col((e) => e.outputTokens),
    col((e) => picosToMicros(e.costPicos).toString()),
    col((e) => e.costPicos.toString()),
    col((e) => e.aiCall),
  ];
}

/** Micro-dollars as a USD decimal string with six places: exact, never a float. */
export function microsToUsd(micros: bigint | number | string): string {
  const m = BigInt(micros);
  const sign = m < 0n ? '-' : '';
  const abs = m < 0n ? -m : m;
  return `${sign}${abs / 1_000_000n}.${String(abs % 1_000_000n).padStart(6, '0')}`;
}

const PICOS_PER_MICRO = 1_000_000n;

/** Rounds pico-dollars half-up to micro-dollars. */
export function picosToMicros(picos: bigint | string): bigint {
  const p = BigInt(picos);
  return (p + PICOS_PER_MICRO / 2n) / PICOS_PER_MICRO;
}
