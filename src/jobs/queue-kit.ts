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
import { hostname } from 'node:os';
import { withDeadline } from '../lib/deadline.js';
import { guardClients, type Pool } from '../db/pool.js';

/**
 * One way to make queues and workers, on either BullMQ backend: Redis when
 * `REDIS_URL` is set (production), else BullMQ's PostgreSQL backend in our own database
 * (schema `bullmq`). Callers never see which: the same producers and processors run on both.
 *
 * Glossary: a *queue* is the producer side of a named BullMQ queue (it holds a Redis connection,
 * or on PostgreSQL a pool of up to 5 connections that checks BullMQ's schema when opened); a
 * *worker* consumes one. A process holds ONE queue per name: `queue(name)` opens it on first use
 * and hands out that same queue afterwards, and the kit closes every queue and worker once, in
 * `close()`. (It used to open a new queue per call: every batch request and every maintenance
 * run left one more connection open until shutdown.)
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
}

export interface WorkerHandle {
  close(): Promise<void>;
  on(event: 'failed' | 'completed' | 'error', listener: (...args: unknown[]) => void): unknown;
}

export interface QueueKit {
  kind: QueueBackendKind;
  /**
   * The name every connection of the kit carries (`CLIENT SETNAME` on Redis, `application_name`
   * on PostgreSQL): `<namespace>:queue-kit`, so an operator (or a test) can count them.
   */
  connectionName: string;
  /**
   * The process's queue of this name, opened on first use; the same one on every later call.
   * Owned by the kit: closed by `close()`, never by the caller.
   */
  queue<D>(name: string): QueueHandle<D>;
  worker<D, R>(name: string, processor: Processor<D, R>, opts?: Partial<WorkerOptions>): WorkerHandle;
  /** A round trip to the backend, for `/readyz`. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * What a producer takes. Every job's module (`jobs/<job>.ts`) holds its queue name, its payload,
 * its producer and its processor, and every producer reads `enqueueX(queues, …what the job is
 * about)`: it opens its own queue from the process's kit, so callers never name queues.
 */
export type JobQueues = Pick<QueueKit, 'queue'>;

export interface QueueKitOptions {
  redisUrl: string | null;
  databaseUrl: string;
  /** Namespaces queues: a Redis key prefix, or a PostgreSQL schema. Tests use one per file. */
  namespace?: string;
  /**
   * Longest a queue step (add, addBulk, a job's state or counts, a scheduler upsert) may take
   * before it fails with 503 `overloaded`. @defaultValue {@link QUEUE_STEP_DEADLINE_MS}
   */
  stepDeadlineMs?: number;
}

/**
 * How long a queue step may take. The Redis connection retries for ever (`maxRetriesPerRequest:
 * null`, which BullMQ's workers need), so with Redis down an `add` would wait until it came
 * back: a request that enqueues answered minutes later, or never. Past the deadline the step
 * fails with 503 `overloaded` and `Retry-After`; callers that committed first undo or keep their
 * work as their own comments say (an add that completes after its deadline is harmless: job ids
 * are derived from what they run).
 */
export const QUEUE_STEP_DEADLINE_MS = 2_000;

const BOUNDED_STEPS = new Set<PropertyKey>([
  'add',
  'addBulk',
  'upsertJobScheduler',
  'getJobCounts',
  'getJobState',
]);

/**
 * `queue` with the steps of {@link QueueHandle} bounded by `ms` (see {@link QUEUE_STEP_DEADLINE_MS}).
 * A proxy, not a copy: everything else (what the queue dashboard reads) is the queue's own.
 */
function bounded<Q extends object>(queue: Q, ms: number): Q {
  return new Proxy(queue, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const fn = (value as (...args: unknown[]) => unknown).bind(target);
      if (!BOUNDED_STEPS.has(prop)) return fn;
      return (...args: unknown[]) => withDeadline(() => fn(...args) as Promise<unknown>, ms, 'job queue');
    },
  });
}

/** The queue `/readyz` asks for a job count: a round trip that proves the backend answers. */
const HEALTH_QUEUE = 'health';

/**
 * The name every worker of this process gives BullMQ, which records it on each job it takes
 * (`processedBy`): the queue dashboard, and an operator, can tell which process on which machine
 * ran or is running a job.
 */
export const WORKER_NAME = `${hostname()}:${process.pid}`;

function redisOptions(url: string, connectionName: string): ConnectionOptions {
  const u = new URL(url);
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: Number(u.port || 6379),
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
    tls: u.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
    connectionName,
  };
}

interface Closable {
  close(): Promise<void>;
}

export function createQueueKit(opts: QueueKitOptions): QueueKit {
  const open: Closable[] = [];
  const track = <T extends Closable>(x: T): T => {
    open.push(x);
    return x;
  };
  const queues = new Map<string, Closable>();
  // On Redis only: its connection retries for ever. PostgreSQL's queue fails by itself when the
  // database is down (and the first step of a queue may migrate BullMQ's schema, which takes time).
  const deadline = opts.redisUrl ? (opts.stepDeadlineMs ?? QUEUE_STEP_DEADLINE_MS) : null;
  /** One queue per name for the life of the kit (see the glossary above), its steps bounded. */
  const named = <D>(name: string, make: () => Closable): QueueHandle<D> => {
    let queue = queues.get(name);
    if (!queue) {
      const made = track(make());
      queues.set(name, (queue = deadline === null ? made : bounded(made, deadline)));
    }
    return queue as unknown as QueueHandle<D>;
  };
  const closeAll = async () => {
    queues.clear();
    await Promise.allSettled(
      open
        .splice(0)
        .reverse()
        .map((x) => x.close()),
    );
  };

  if (opts.redisUrl) {
    const prefix = opts.namespace ?? 'bull';
    const connectionName = `${prefix}:queue-kit`;
    const connection = redisOptions(opts.redisUrl, connectionName);
    return {
      kind: 'redis',
      connectionName,
      queue: <D>(name: string) => named<D>(name, () => new Queue(name, { connection, prefix })),
      worker: (name, processor, wopts) =>
        track(
          new Worker(name, processor, { connection, prefix, name: WORKER_NAME, ...wopts }),
        ) as unknown as WorkerHandle,
      async ping() {
        await named(HEALTH_QUEUE, () => new Queue(HEALTH_QUEUE, { connection, prefix })).getJobCounts(
          'waiting',
        );
      },
      close: closeAll,
    };
  }

  const pg = withBackend(createPostgresBackend);
  /**
   * BullMQ's PostgreSQL backend opens a pool per queue and worker, and checks a client out of it
   * (to migrate or check its schema) without an 'error' listener: a backend terminated then
   * would end the process. Its pool is reached the one way BullMQ 6 exposes it; a later version
   * that moves it fails the fault test (test/faults/database-kill.test.ts), not silently.
   */
  const guarded = <T>(made: T): T => {
    const pool = (made as { backend?: { connection?: { pool?: Pool } } }).backend?.connection?.pool;
    if (pool) guardClients(pool);
    return made;
  };
  const schema = opts.namespace ?? 'bullmq';
  const connectionName = `${schema}:queue-kit`;
  const connection = {
    connectionString: opts.databaseUrl,
    schema,
    migrate: true,
    max: 5,
    application_name: connectionName,
  };
  return {
    kind: 'postgres',
    connectionName,
    queue: <D>(name: string) => named<D>(name, () => guarded(new pg.Queue(name, { connection }))),
    worker: (name, processor, wopts) =>
      track(
        guarded(
          new pg.Worker(name, processor as never, { connection, name: WORKER_NAME, ...wopts } as never),
        ),
      ) as unknown as WorkerHandle,
    async ping() {
      await named(HEALTH_QUEUE, () => guarded(new pg.Queue(HEALTH_QUEUE, { connection }))).getJobCounts(
        'waiting',
      );
    },
    close: closeAll,
  };
}
