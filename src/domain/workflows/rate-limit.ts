import type { Redis } from 'ioredis';
import { TARGETS, WORKFLOW_KINDS, type WorkflowKind, type WorkflowTarget } from './targets/registry.js';
import type { TargetRateLimit } from './types.js';

/**
 * A workflow's proactive rate limit on its target (docs/workflows.md#rate-limits): at most `requests` calls in any
 * `perSeconds` seconds, so a burst of deliveries paces itself instead of learning the target's
 * limit from its 429s. Requests are spaced evenly (a GCRA "virtual schedule" with no burst): each
 * call reserves the next free slot of its workflow; a slot at most `maxWaitMs` away is waited for
 * in process, a later one is not taken and the delivery's job is delayed until then (the worker
 * slot is freed; no attempt is spent). With Redis the schedule lives in Redis (one key per
 * workflow, the Redis clock), so every worker process shares it; without, it is per process.
 *
 * Each kind's default is its registry entry's `defaultRateLimit` (`targets/<kind>/index.ts`, from
 * the target's own documentation).
 */
export type RateLimit = TargetRateLimit;

export const DEFAULT_RATE_LIMITS: Readonly<Record<WorkflowKind, RateLimit>> = Object.fromEntries(
  WORKFLOW_KINDS.map((k) => [k, TARGETS[k].defaultRateLimit]),
) as Record<WorkflowKind, RateLimit>;

/** The limit in force for a target: its own, else its kind's default. */
export function rateLimitOf(target: WorkflowTarget): RateLimit {
  return target.rateLimit ?? DEFAULT_RATE_LIMITS[target.kind];
}

/**
 * Added to the period before it is divided among the requests: a call that leaves a few tens of
 * milliseconds late (a busy event loop, the network) must not put `requests + 1` calls into one
 * period as the target counts them.
 */
export const JITTER_GUARD_MS = 50;

/** Milliseconds between two calls of a workflow under `limit` (rounded up: never faster). */
export function spacingMs(limit: RateLimit): number {
  return Math.ceil((limit.perSeconds * 1000 + JITTER_GUARD_MS) / limit.requests);
}

/** A slot: `granted` when it was taken (wait `waitMs`, then call); else come back in `waitMs`. */
export interface Slot {
  granted: boolean;
  waitMs: number;
}

/** The GCRA step: the next slot after `tat` (the theoretical arrival time of the next call). */
export function nextSlot(
  tat: number,
  now: number,
  spacing: number,
  maxWaitMs: number,
): Slot & { tat: number } {
  const at = Math.max(tat, now);
  const waitMs = at - now;
  if (waitMs > maxWaitMs) return { granted: false, waitMs, tat };
  return { granted: true, waitMs, tat: at + spacing };
}

/** Where the schedules live: this process, or Redis for every process of a deployment. */
export interface Pacer {
  reserve(key: string, spacing: number, maxWaitMs: number): Promise<Slot>;
  close(): void;
}

export function localPacer(now: () => number = Date.now): Pacer {
  const tats = new Map<string, number>();
  return {
    async reserve(key, spacing, maxWaitMs) {
      const t = now();
      const s = nextSlot(tats.get(key) ?? t, t, spacing, maxWaitMs);
      if (s.granted) tats.set(key, s.tat);
      // Schedules in the past are forgotten, so a process serving many workflows stays small.
      if (tats.size > 10_000) for (const [k, v] of tats) if (v < t) tats.delete(k);
      return { granted: s.granted, waitMs: s.waitMs };
    },
    close: () => undefined,
  };
}

// KEYS: the schedule. ARGV: spacing ms, most wait ms. The Redis clock: every process agrees on it.
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - now
if wait > tonumber(ARGV[2]) then return {0, wait} end
local nxt = tat + tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%.0f', nxt), 'PX', nxt - now + 1000)
return {1, wait}
`;

/** How long a Redis reservation may take before this call falls back to the process's pacer. */
const STORE_DEADLINE_MS = 1_000;

/**
 * The schedules in Redis (`<prefix>:wf-rate:<workflow id>`), shared by every process. When Redis
 * fails or is slow, the call is paced by this process's own schedule instead (told through
 * `onStoreError`): a Redis outage slows nothing down and, at worst, lets each process use the
 * whole limit until Redis answers again.
 */
export function redisPacer(
  redis: Redis,
  prefix: string,
  options: { onStoreError?: (err: Error) => void } = {},
): Pacer {
  const fallback = localPacer();
  return {
    async reserve(key, spacing, maxWaitMs) {
      let timer: NodeJS.Timeout | undefined;
      try {
        const answer = (await Promise.race([
          redis.eval(RESERVE, 1, `${prefix}:wf-rate:${key}`, spacing, maxWaitMs),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('rate-limit store timed out')), STORE_DEADLINE_MS);
          }),
        ])) as [number, number];
        return { granted: answer[0] === 1, waitMs: Number(answer[1]) };
      } catch (err) {
        options.onStoreError?.(err as Error);
        return fallback.reserve(key, spacing, maxWaitMs);
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => undefined,
  };
}

/**
 * The gate of one workflow's calls: waits for its slot when it is at most `maxWaitMs` away and
 * answers null (go), else answers how many milliseconds until the schedule has room.
 */
export function workflowGate(
  pacer: Pacer,
  workflowId: string,
  limit: RateLimit,
  maxWaitMs: number,
): () => Promise<number | null> {
  const spacing = spacingMs(limit);
  return async () => {
    const slot = await pacer.reserve(workflowId, spacing, maxWaitMs);
    if (!slot.granted) return Math.max(1, slot.waitMs);
    if (slot.waitMs > 0) await new Promise((r) => setTimeout(r, slot.waitMs));
    return null;
  };
}
