import type { Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';

/**
 * The inbound deliveries seen (m013's `workflow_inbound_events`): a webhook's delivery id is
 * remembered so a replay of it is refused (docs/workflows.md#status-flowing-back).
 */

/** Remembers an inbound delivery id; false when it was seen before (a replay). */
export async function firstSightOfInbound(
  db: Queryable,
  workflowId: string,
  deliveryId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    sql`INSERT INTO workflow_inbound_events (workflow_id, delivery_id)
        VALUES (${workflowId}, ${deliveryId.slice(0, 200)}) ON CONFLICT DO NOTHING`,
  );
  return (rowCount ?? 0) > 0;
}
