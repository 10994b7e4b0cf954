import { Registry, collectDefaultMetrics } from 'prom-client';
import type { ModelCatalogEntry } from '../../lib/config.js';
import type { HttpMetrics } from '../../api/plugins/metrics.js';
import type { TriageObserver } from '../../domain/triage/triage-service.js';
import type { ScanIngestObserver } from '../../domain/scans/ingest-scan.js';
import type { QueueKit } from '../../jobs/queue-kit.js';
import { createTriageMetrics } from './triage-metrics.js';
import type { JobObserver } from '../../jobs/timed-queue-kit.js';
import { createQueueMetrics, SERVICE_QUEUES } from './queue-metrics.js';
import { metricKit } from './metric-kit.js';

/**
 * The metrics of one process, on a registry of its own (never prom-client's global one: several
 * apps run in one test process, and each must count only its own work). Built once in the
 * composition root; each part is handed to the code that records it.
 */
export interface ProcessMetrics {
  registry: Registry;
  http: HttpMetrics;
  triage: TriageObserver;
  scans: ScanIngestObserver;
  jobs: JobObserver;
  keyCache: { lookup(hit: boolean): void; invalidated(kind: string): void };
}

/**
 * How often (ms) the `nodejs_eventloop_lag_*` histogram samples the event loop's delay. Each
 * sample is a timer that wakes the process: prom-client's default, 10 ms, woke an idle `web`
 * process ~97 times a second, against ~11 at 100 ms (docs/operations.md#metrics). At 100 ms a
 * stall of 100 ms or more always shows in the histogram's max; shorter ones are sampled.
 */
const LOOP_DELAY_SAMPLE_MS = 100;

/** Buckets of request latency: API answers are milliseconds, uploads and exports seconds. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const HTTP_LABELS = ['route', 'method', 'status'] as const;

export function createProcessMetrics(opts: {
  queues: QueueKit;
  /** Queues whose depth is read at scrape time. @defaultValue every queue of the service */
  queueNames?: readonly string[];
  catalog: readonly ModelCatalogEntry[];
}): ProcessMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: LOOP_DELAY_SAMPLE_MS });
  const { counter, histogram } = metricKit(registry);

  const requests = counter(
    'vuln_triage_http_requests_total',
    'HTTP requests answered, by route pattern, method and status.',
    HTTP_LABELS,
  );
  const duration = histogram(
    'vuln_triage_http_request_duration_seconds',
    'Time from request received to response sent, by route pattern, method and status.',
    HTTP_LABELS,
    HTTP_BUCKETS,
  );

  const scans = counter(
    'vuln_triage_scans_total',
    'Scans ended by this process, by format and outcome (completed, unparseable, gave_up).',
    ['format', 'outcome'],
  );
  const scanBytes = counter(
    'vuln_triage_scan_bytes_parsed_total',
    'Bytes of scan files parsed to completion, by format.',
    ['format'],
  );
  const scanFindings = counter(
    'vuln_triage_scan_findings_parsed_total',
    'Findings read from scans parsed to completion, by format.',
    ['format'],
  );

  const keyLookups = counter(
    'vuln_triage_key_cache_lookups_total',
    'API key verifications by whether the process cache served them (hit) or the database (miss).',
    ['result'],
  );
  const keyInvalidations = counter(
    'vuln_triage_key_cache_invalidations_total',
    'Key cache invalidations received, by kind (key, workspace, all).',
    ['kind'],
  );
  // Present from the first scrape, so rate() has a series to start from.
  keyLookups.inc({ result: 'hit' }, 0);
  keyLookups.inc({ result: 'miss' }, 0);

  return {
    registry,
    http: {
      observeRequest(route, method, status, seconds) {
        const labels = { route, method, status: String(status) };
        requests.inc(labels);
        duration.observe(labels, seconds);
      },
      async scrape() {
        return { contentType: registry.contentType, body: await registry.metrics() };
      },
    },
    triage: createTriageMetrics(registry, opts.catalog),
    scans: {
      scanEnded({ format, outcome, bytes, findings }) {
        scans.inc({ format, outcome });
        if (bytes > 0) scanBytes.inc({ format }, bytes);
        if (findings > 0) scanFindings.inc({ format }, findings);
      },
    },
    jobs: createQueueMetrics(registry, opts.queues, opts.queueNames ?? SERVICE_QUEUES),
    keyCache: {
      lookup: (hit) => keyLookups.inc({ result: hit ? 'hit' : 'miss' }),
      invalidated: (kind) => keyInvalidations.inc({ kind }),
    },
  };
}
