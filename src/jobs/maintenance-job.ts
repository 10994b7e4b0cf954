import type { JobQueues } from './queue-kit.js';

/** Queue of the periodic housekeeping job (see `domain/maintenance.ts`). */
export const MAINTENANCE_QUEUE = 'maintenance';
export const MAINTENANCE_EVERY_MS = 60_000;

export type MaintenancePayload = Record<string, never>;

/** Registers the repeating job once; every worker may call this, the scheduler id dedupes. */
export async function scheduleMaintenance(queues: JobQueues): Promise<void> {
  const queue = queues.queue<MaintenancePayload>(MAINTENANCE_QUEUE);
  await queue.upsertJobScheduler(
    'maintenance-every-minute',
    { every: MAINTENANCE_EVERY_MS },
    { name: 'sweep', data: {} },
  );
}

/**
 * Keeps the maintenance scheduler registered: a scheduler lives in the queue
 * backend, so Redis data loss (a flush, a failover to an empty replica) removed it until a
 * worker restarted, and stuck scans, lost batch items and held reservations were never swept.
 * Re-asserted at once and then every `everyMs` (idempotent: the scheduler id dedupes), so
 * sweeps resume within one interval plus `everyMs` of any loss without a restart.
 * Returns the function that stops it.
 */
export function keepMaintenanceScheduled(
  queues: JobQueues,
  options: { everyMs?: number; onError?: (err: Error) => void } = {},
): () => void {
  const assert = () => void scheduleMaintenance(queues).catch((err: Error) => options.onError?.(err));
  assert();
  const timer = setInterval(assert, options.everyMs ?? 15_000);
  timer.unref();
  return () => clearInterval(timer);
}

/** The processor: one housekeeping run (`domain/maintenance.ts`, wired by `app/`). */
export function maintenanceProcessor(run: () => Promise<unknown>) {
  return (): Promise<unknown> => run();
}
