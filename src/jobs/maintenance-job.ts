import type { QueueKit } from './queue-kit.js';

/** Queue of the periodic housekeeping job (see `domain/maintenance.ts`). */
export const MAINTENANCE_QUEUE = 'maintenance';
export const MAINTENANCE_EVERY_MS = 60_000;

export type MaintenancePayload = Record<string, never>;

/** Registers the repeating job once; every worker may call this, the scheduler id dedupes. */
export async function scheduleMaintenance(queues: QueueKit): Promise<void> {
  const queue = queues.queue<MaintenancePayload>(MAINTENANCE_QUEUE);
  await queue.upsertJobScheduler(
    'maintenance-every-minute',
    { every: MAINTENANCE_EVERY_MS },
    { name: 'sweep', data: {} },
  );
}
