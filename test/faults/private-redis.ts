import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/** Whether this machine has a redis-server binary for the suites that start their own. */
export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

/**
 * A redis-server of the test's own on a free port, without persistence, so a fault test can
 * stop, restart or wipe it without touching the Redis other suites share.
 */
export interface PrivateRedis {
  url: string;
  /** SIGKILL: the server is gone, connections drop, the port refuses. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  /** SIGSTOP: connections stay open and nothing answers (a hung server); the data is kept. */
  pause(): void;
  /** SIGCONT after {@link PrivateRedis.pause}. */
  resume(): void;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  async function start(): Promise<void> {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    for (let i = 0; i < 50; i++) {
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    probe.disconnect();
    throw new Error(`redis-server did not start on port ${port}`);
  }
  async function kill(): Promise<void> {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  }
  await start();
  return {
    url,
    kill,
    start,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
  };
}
