import pino, { type Logger, type DestinationStream } from 'pino';
import pretty from 'pino-pretty';

/**
 * Secrets never reach logs (docs/operations.md#processes): headers that carry them are redacted, and
 * anything shaped like an API key or a reveal token is masked wherever it appears in a URL.
 */
const KEY_IN_TEXT = /svc_[0-9A-Za-z]{38}/g;
const REVEAL_IN_URL = /(\/reveal\/)[^/?#]+/g;
/** An OpenID provider's redirect back carries the authorization code and the state (docs/console.md#the-sign-in). */
const OAUTH_IN_QUERY = /([?&](?:code|state)=)[^&#]*/g;

export function scrubUrl(url: string): string {
  return url
    .replace(KEY_IN_TEXT, 'svc_[redacted]')
    .replace(REVEAL_IN_URL, '$1[redacted]')
    .replace(OAUTH_IN_QUERY, '$1[redacted]');
}

export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.key',
  '*.secret',
  '*.clientSecret',
];

/**
 * Database driver errors carry the SQL and its parameters in their message (hashes,
 * emails). Log what identifies the failure, never the statement.
 */
export function safeError(err: unknown): unknown {
  const e = err as {
    name?: string;
    code?: string;
    sqlState?: string;
    constraint?: string;
    table?: string;
    severity?: string;
    message?: string;
  };
  if (e && typeof e === 'object' && (e.sqlState !== undefined || /Exception$/.test(e.name ?? ''))) {
    return { type: e.name, code: e.code, sqlState: e.sqlState, constraint: e.constraint, table: e.table };
  }
  if (e && typeof e === 'object' && e.severity !== undefined && typeof e.code === 'string') {
    // node-postgres errors: the message has no parameters; `detail` may, so it is left out.
    return {
      type: 'DatabaseError',
      code: e.code,
      message: e.message,
      constraint: e.constraint,
      table: e.table,
    };
  }
  return pino.stdSerializers.err(err as Error);
}

/**
 * The process logger. With `pretty` (a person's terminal, `npm start`) each line is short and
 * human-readable through pino-pretty (`12:04:31 INFO: GET /healthz 200 1 ms`), written to
 * `destination` or stdout; otherwise pino's JSON lines, for `web`/`worker` and log shippers.
 * Redaction and serializers are the same in both.
 */
export function createLogger(
  level: string,
  destination?: DestinationStream,
  options: { pretty?: boolean } = {},
): Logger {
  if (options.pretty) {
    destination = pretty({
      destination: destination ?? 1,
      colorize: destination === undefined && process.stdout.isTTY === true,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname,reqId',
      singleLine: true,
      sync: true,
    });
  }
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: {
        req: (req: { method: string; url: string; id?: string }) => ({
          method: req.method,
          url: scrubUrl(req.url),
          id: req.id,
        }),
        err: safeError,
      },
    },
    destination,
  );
}

export type { Logger };
