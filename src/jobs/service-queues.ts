import { TRIAGE_QUEUE } from './triage-batch.js';
import { EXPORT_QUEUE } from './export-job.js';
import { SCAN_INGEST_QUEUE } from './scan-ingest.js';
import { MAINTENANCE_QUEUE } from './maintenance-job.js';
import { ENRICHMENT_QUEUE } from './enrichment-refresh.js';
import { DELIVERY_QUEUE } from './workflow-delivery.js';

/** Every queue of the service: their depth is in the metrics, their jobs on the dashboard. */
export const SERVICE_QUEUES = [
  SCAN_INGEST_QUEUE,
  TRIAGE_QUEUE,
  EXPORT_QUEUE,
  MAINTENANCE_QUEUE,
  ENRICHMENT_QUEUE,
  DELIVERY_QUEUE,
] as const;
