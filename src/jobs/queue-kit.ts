import {
  Queue,
  Worker,
  createPostgresBackend,
  withBackend,
  type ConnectionOptions,
  type JobsOptions,
  type Processor,
  type WorkerOptions,
} from 'bullmq';

/**
 * One way to make queues and workers, on either BullMQ backend (DECISIONS §1): Redis when
 * `REDIS_URL` is set (production), else BullMQ's PostgreSQL backend in our own database
 * (schema `bullmq`). Callers never see which: the same producers and processors run on both.
 */
export type QueueBackendKind = 'redis' | 'postgres';

export interface QueueHandle<D> {
  name: string;
  add(jobName: string, data: D, opts?: JobsOptions): Promise<{ id?: string | undefined }>;
  addBulk(jobs: { name: string; data: D; opts?: JobsOptions }[]): Promise<unknown>;
  upsertJobScheduler(
    id: string,
    repeat: { every: number },
    template: { name: string; data: D },
  ): Promise<unknown>;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
  /** `'unknown'` for a job that does not exist (see `lib/job-state.ts`). */
  getJobState(jobId: string): Promise<string>;
  close(): Promise<void>;
}

export interface WorkerHandle {
  close(): Promise<void>;
  on(event: 'failed' | 'completed' | 'error', listener: (...args: unknown[]) => void): unknown;
}

export interface QueueKit {
  kind: QueueBackendKind;
  queue<D>(name: string): QueueHandle<D>;
  worker<D, R>(name: string, processor: Processor<D, R>, opts?: Partial<WorkerOptions>): WorkerHandle;
  /** A round trip to the backend, for `/readyz`. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface QueueKitOptions {
  redisUrl: string | null;
  databaseUrl: string;
  /** Namespaces queues: a Redis key prefix, or a PostgreSQL schema. Tests use one per file. */
  namespace?: string;
}

function redisOptions(url: string): ConnectionOptions {
  const u = new URL(url);
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: Number(u.port || 6379),
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
    tls: u.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}

export function createQueueKit(opts: QueueKitOptions): QueueKit {
  const open: { close(): Promise<void> }[] = [];
  const track = <T extends { close(): Promise<void> }>(x: T): T => {
    open.push(x);
    return x;
  };

  if (opts.redisUrl) {
    const connection = redisOptions(opts.redisUrl);
    const prefix = opts.namespace ?? 'bull';
    let pingQueue: Queue | null = null;
    return {
      kind: 'redis',
      queue: <D>(name: string) => track(new Queue(name, { connection, prefix })) as unknown as QueueHandle<D>,
      worker: (name, processor, wopts) =>
        track(new Worker(name, processor, { connection, prefix, ...wopts })) as unknown as WorkerHandle,
      async ping() {
        pingQueue ??= track(new Queue('health', { connection, prefix }));
        await pingQueue.getJobCounts('waiting');
      },
      async close() {
        await Promise.allSettled(
          open
            .splice(0)
            .reverse()
            .map((x) => x.close()),
        );
      },
    };
  }

  const pg = withBackend(createPostgresBackend);
  const connection = {
    connectionString: opts.databaseUrl,
    schema: opts.namespace ?? 'bullmq',
    migrate: true,
    max: 5,
  };
  let pingQueue: { getJobCounts(...t: string[]): Promise<unknown>; close(): Promise<void> } | null = null;
  return {
    kind: 'postgres',
    queue: <D>(name: string) => track(new pg.Queue(name, { connection })) as unknown as QueueHandle<D>,
    worker: (name, processor, wopts) =>
      track(
        new pg.Worker(name, processor as never, { connection, ...wopts } as never),
      ) as unknown as WorkerHandle,
    async ping() {
      pingQueue ??= track(new pg.Queue('health', { connection }));
      await pingQueue.getJobCounts('waiting');
    },
    async close() {
      await Promise.allSettled(
        open
          .splice(0)
          .reverse()
          .map((x) => x.close()),
      );
    },
  };
}
