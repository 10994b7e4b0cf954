/**
 * A process running only the scan-ingest worker, for the crash-safety test (SIGKILL mid-parse,
 * then a restart). Reads DATABASE_URL, KEY_PEPPER, REDIS_URL, SCAN_STORAGE_DIR and
 * PARSER_THREADS through the normal config, plus QUEUE_NAMESPACE (the test app's queues) and
 * SCAN_LOCK_MS (short locks, so a killed worker's job is taken over within seconds).
 * Prints "scan worker ready" once it is serving.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { createPool } from '../../src/db/pool.js';
import { createQueueKit } from '../../src/jobs/queue-kit.js';
import { startScanIngestWorker } from '../../src/workers/scan-ingest-worker.js';
import { createWorkflowTrigger } from '../../src/domain/workflows/trigger.js';
import { enqueueDeliveries } from '../../src/jobs/workflow-delivery.js';

export interface ScanWorkerProcess {
  child: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Spawns this file as a worker process and resolves once it is serving. */
export async function startScanWorkerProcess(env: Record<string, string>): Promise<ScanWorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`scan worker did not start:\n${out}`)), 30_000);
    child.stdout!.on('data', () => {
      if (out.includes('scan worker ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => reject(new Error(`scan worker exited:\n${out}`)));
  });
  return {
    child,
    output: () => out,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const pool = createPool(config.databaseUrl!);
  const queues = createQueueKit({
    redisUrl: config.redisUrl,
    databaseUrl: config.databaseUrl!,
    namespace: process.env.QUEUE_NAMESPACE,
  });
  const lock = Number(process.env.SCAN_LOCK_MS ?? 30_000);
  const worker = startScanIngestWorker({
    queues,
    pool,
    logger,
    config,
    batchSize: 200,
    lockDurationMs: lock,
    stalledIntervalMs: Math.max(500, Math.floor(lock / 2)),
    // As the Procfile worker: a completed scan's workflow deliveries are queued (none are sent here).
    afterScan: createWorkflowTrigger({
      pool,
      enqueue: (workflowId, ids) => enqueueDeliveries(queues, workflowId, ids),
    }).scanCompleted,
  });
  process.stdout.write('scan worker ready\n');
  process.on('SIGTERM', () => {
    void (async () => {
      await worker.close();
      await queues.close();
      await pool.end();
      process.exit(0);
    })();
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
