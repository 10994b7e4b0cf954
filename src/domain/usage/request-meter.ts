import type { Db } from '../../db/pool.js';
import { addKeyRequests, type KeyDayCount, type KeyLastUse } from './counter-store.js';

/**
 * Counts authenticated requests per key and remembers when each key was last used,
 * in memory, and writes both in one statement per flush (every second by default).
 * This is how `last used` stays current without a database write per request
 * (docs/api.md#keys). A crash loses at most one interval of counts.
 */
export interface RequestMeter {
  record(keyId: string, workspaceId: string, at: Date): void;
  flush(): Promise<void>;
  stop(): Promise<void>;
}

interface Pending {
  workspaceId: string;
  days: Map<string, number>;
  lastUsed: Date;
}

/** How often a process writes its request counts: `requests` and `last used` lag by up to this. */
export const REQUEST_METER_INTERVAL_MS = 1000;

export function createRequestMeter(db: Db, intervalMs = REQUEST_METER_INTERVAL_MS): RequestMeter {
  let pending = new Map<string, Pending>();
  let flushing: Promise<void> = Promise.resolve();

  async function write(batch: Map<string, Pending>): Promise<void> {
    if (batch.size === 0) return;
    const counts: KeyDayCount[] = [];
    const lastUses: KeyLastUse[] = [];
    for (const [keyId, p] of batch) {
      for (const [day, requests] of p.days) counts.push({ keyId, workspaceId: p.workspaceId, day, requests });
      lastUses.push({ keyId, at: p.lastUsed });
    }
    await addKeyRequests(db, counts, lastUses);
  }

  function flush(): Promise<void> {
    const batch = pending;
    pending = new Map();
    flushing = flushing
      .then(() => write(batch))
      .catch(() => {
        // Keep the counts for the next flush rather than lose them on a passing error.
        for (const [keyId, p] of batch) {
          const cur = pending.get(keyId);
          if (!cur) pending.set(keyId, p);
          else for (const [day, n] of p.days) cur.days.set(day, (cur.days.get(day) ?? 0) + n);
        }
      });
    return flushing;
  }

  const timer = setInterval(() => void flush(), intervalMs);
  timer.unref();

  return {
    record(keyId, workspaceId, at) {
      const day = at.toISOString().slice(0, 10);
      let p = pending.get(keyId);
      if (!p) {
        p = { workspaceId, days: new Map(), lastUsed: at };
        pending.set(keyId, p);
      }
      p.days.set(day, (p.days.get(day) ?? 0) + 1);
      if (at > p.lastUsed) p.lastUsed = at;
    },
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
