import type { Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';

/**
 * The per-case leases (m019's `workflow_case_leases`): one attempt at a time per (workflow,
 * case), each statement autocommitted so no connection is kept across remote calls
 * (`case-lease.ts` holds the rules).
 */

/** `ttlMs` from now, in SQL. */
const fromNow = (ttlMs: number) => sql`now() + make_interval(secs => ${ttlMs}::double precision / 1000)`;

/**
 * Takes the lease on one (workflow, case) for `holder` until `ttlMs` from now: answers `null`
 * when taken, else when the current holder's lease runs out. A lease whose time is up (its
 * holder crashed) is taken over. One autocommitted statement: no connection is kept.
 */
export async function takeCaseLease(
  db: Queryable,
  workflowId: string,
  caseId: string,
  holder: string,
  ttlMs: number,
): Promise<Date | null> {
  const { rows } = await db.query<{ holder: string; leased_until: Date }>(
    sql`WITH taken AS (
          INSERT INTO workflow_case_leases (workflow_id, case_id, holder, leased_until)
          VALUES (${workflowId}, ${caseId}, ${holder}, ${fromNow(ttlMs)})
          ON CONFLICT (workflow_id, case_id) DO UPDATE SET holder = EXCLUDED.holder, leased_until = EXCLUDED.leased_until
            WHERE workflow_case_leases.leased_until < now()
          RETURNING holder, leased_until)
        SELECT holder, leased_until FROM taken
        UNION ALL
        SELECT holder, leased_until FROM workflow_case_leases
         WHERE workflow_id = ${workflowId} AND case_id = ${caseId} AND NOT EXISTS (SELECT 1 FROM taken)`,
  );
  const r = rows[0];
  if (!r) return new Date(); // released between the two reads: free, try again at once
  return r.holder === holder ? null : r.leased_until;
}

/** Extends `holder`'s lease by `ttlMs` from now; false when it is no longer `holder`'s. */
export async function renewCaseLease(
  db: Queryable,
  workflowId: string,
  caseId: string,
  holder: string,
  ttlMs: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    sql`UPDATE workflow_case_leases SET leased_until = ${fromNow(ttlMs)}
        WHERE workflow_id = ${workflowId} AND case_id = ${caseId} AND holder = ${holder}`,
  );
  return (rowCount ?? 0) > 0;
}

/** Gives the lease back (only `holder`'s own: a lease taken over after it ran out stays). */
export async function releaseCaseLease(
  db: Queryable,
  workflowId: string,
  caseId: string,
  holder: string,
): Promise<void> {
  await db.query(
    sql`DELETE FROM workflow_case_leases
        WHERE workflow_id = ${workflowId} AND case_id = ${caseId} AND holder = ${holder}`,
  );
}
