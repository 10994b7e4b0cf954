import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Infrastructure } from '../../src/app/infrastructure.js';
import type { Services } from '../../src/app/services.js';
import { assembleApp } from '../../src/app/lifecycle.js';
import { createTestDatabase } from './db.js';

export interface TestServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  app: FastifyInstance;
  deps: Services;
  infra: Infrastructure;
  /** Stops the server, the services and the connections, then drops the database. */
  close(): Promise<void>;
}

/**
 * The real service, console pages included, listening on a free port of 127.0.0.1 over a
 * fresh database: what the end-to-end tests drive with a real browser and real HTTP.
 * The clock is the real one, because the browser and the server must agree on time.
 */
export async function startTestServer(
  options: {
    env?: Record<string, string>;
    /** A port chosen beforehand (default: any free one). */ port?: number;
  } = {},
): Promise<TestServer> {
  const db = await createTestDatabase();
  try {
    const config = loadConfig({
      DATABASE_URL: db.url,
      KEY_PEPPER: 'x'.repeat(40),
      PORT: '0',
      LOG_LEVEL: 'silent',
      ...options.env,
    });
    const logger = createLogger(config.logLevel);
    const { app, services, infra, close } = await assembleApp(config, logger, {
      queueNamespace: `e2e${randomBytes(4).toString('hex')}`,
    });
    await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    return {
      url: `http://127.0.0.1:${port}`,
      app,
      deps: services,
      infra,
      async close() {
        await close();
        await db.drop();
      },
    };
  } catch (err) {
    await db.drop().catch(() => undefined);
    throw err;
  }
}
