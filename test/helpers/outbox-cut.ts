import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from '../../src/db/pool.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `act` while the test holds the workflow outbox (a SHARE lock on `workflow_deliveries`),
 * cuts the connection of whatever waits on it there (a crash at that point), then lets go;
 * `act`'s answer or error (docs/workflows.md#when-deliveries-happen: a change and its deliveries
 * commit together, so after the cut a test finds both or neither).
 */
export async function cutAtOutbox(pool: Pool, act: () => Promise<unknown>): Promise<unknown> {
  const holder = await pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE workflow_deliveries IN SHARE MODE');
    const first = act().catch((err: unknown) => err);
    let blocked: number | undefined;
    for (let i = 0; blocked === undefined; i++) {
      if (i > 1500) throw new Error('the change never reached the outbox');
      const { rows } = await pool.query<{ pid: number }>(
        `SELECT pid FROM pg_locks WHERE locktype = 'relation' AND NOT granted
            AND relation = 'workflow_deliveries'::regclass`,
      );
      blocked = rows[0]?.pid;
      if (blocked === undefined) await sleep(20);
    }
    await pool.query('SELECT pg_terminate_backend($1)', [blocked]);
    await holder.query('COMMIT');
    return await first;
  } finally {
    holder.release();
  }
}

/** A generic webhook target on 127.0.0.1 that answers 204 and keeps every event it got. */
export interface HookReceiver {
  url: string;
  /** The events received, parsed (`type`, `data.id` the case), in arrival order. */
  events: { type: string; data: { id: string } }[];
  close(): Promise<void>;
}

export async function startHookReceiver(): Promise<HookReceiver> {
  const events: HookReceiver['events'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      events.push(JSON.parse(Buffer.concat(chunks).toString()) as HookReceiver['events'][number]);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    events,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
