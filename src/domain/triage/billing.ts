import type { ModelCatalogEntry } from '../../lib/config.js';
import type { Hop } from '../triage-engine/types.js';
import type { LedgerEntry } from '../usage/ledger.js';
import { catalogModel, costPicos } from './pricing.js';

/**
 * Ledger rows for one answered request (docs/triage.md#billing): one row per hop that used tokens,
 * priced at the catalog model its tier is billed as (the routine tier at svc-triage-routine,
 * every escalated tier at svc-triage-v1). Exactly one row carries `aiCall`: the hop whose
 * answer stood, or a zero-cost row when the policy answered alone.
 */
export function ledgerRowsFor(input: {
  workspaceId: string;
  keyId: string;
  requestId: string;
  hops: readonly Hop[];
  catalog: readonly ModelCatalogEntry[];
  /** Index of the hop whose answer was returned; null when the policy formed the answer. */
  answeredHop: number | null;
  at: Date;
}): LedgerEntry[] {
  const rows: LedgerEntry[] = [];
  input.hops.forEach((hop, i) => {
    const isAnswer = i === input.answeredHop;
    if (hop.inputTokens + hop.outputTokens === 0 && !isAnswer) return;
    const model = catalogModel(input.catalog, hop.billedAs);
    rows.push({
      workspaceId: input.workspaceId,
      keyId: input.keyId,
      requestId: input.requestId,
      tier: hop.tier,
      catalogModel: model.id,
      providerModel: `${hop.provider}:${hop.providerModel}`,
      inputTokens: hop.inputTokens,
      outputTokens: hop.outputTokens,
      costPicos: costPicos(hop.inputTokens, hop.outputTokens, model),
      aiCall: isAnswer,
      at: input.at,
    });
  });
  if (input.answeredHop === null) {
    rows.push({
      workspaceId: input.workspaceId,
      keyId: input.keyId,
      requestId: input.requestId,
      tier: 'policy',
      catalogModel: 'svc-triage-v1',
      providerModel: 'policy:ssvc',
      inputTokens: 0,
      outputTokens: 0,
      costPicos: 0n,
      aiCall: true,
      at: input.at,
    });
  }
  return rows;
}

/** The hop whose answer the router returned: the last one that answered. */
export function answeredHopIndex(hops: readonly Hop[], servedByPolicy: boolean): number | null {
  if (servedByPolicy) return null;
  for (let i = hops.length - 1; i >= 0; i--) {
    const o = hops[i]!.outcome;
    if (o === 'answered' || o === 'low_confidence') return i;
  }
  return null;
}
