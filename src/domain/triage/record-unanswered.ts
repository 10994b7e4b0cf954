import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../db/pool.js';
import type { Hop } from '../triage-engine/types.js';

/**
 * A request that got no answer (503 `triage_unavailable`) and the hops it made. Providers may
 * have charged us for some of them (a schema-violating answer still used tokens), so they are
 * kept for our own cost accounting — in `triage_unanswered`, never in the usage ledger: the
 * caller is not billed and no AI call is counted (DECISIONS §5).
 */
export interface UnansweredRecord {
  workspaceId: string;
  keyId: string;
  /** The HTTP request id, or `batch:<batchId>:<index>` for a batch item. */
  requestId: string;
  hops: readonly Hop[];
  at: Date;
}

/** Stores one unanswered request with its hops and their token totals, in one statement. */
export async function recordUnanswered(db: Queryable, r: UnansweredRecord): Promise<void> {
  const input = r.hops.reduce((sum, h) => sum + h.inputTokens, 0);
  const output = r.hops.reduce((sum, h) => sum + h.outputTokens, 0);
  await db.query({
    name: 'record-unanswered',
    text: `INSERT INTO triage_unanswered (id, workspace_id, key_id, request_id, hops, input_tokens, output_tokens, created_at)
           VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8)`,
    values: [randomUUID(), r.workspaceId, r.keyId, r.requestId, JSON.stringify(r.hops), input, output, r.at],
  });
}
