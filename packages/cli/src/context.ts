import { usageError } from './errors.js';
import { ApiClient, type Connection } from './http-client.js';
import { colourEnabled, makeStyle, type Style } from './output.js';
import { barsEnabled } from './progress.js';
import { DEFAULT_RETRY, type RetryPolicy } from '@vuln-triage/sdk';

/** Options every command takes (commander's global options). */
export interface GlobalOptions {
  url?: string;
  apiKey?: string;
  retries?: string;
  json?: boolean;
  quiet?: boolean;
}

/** What a command runs with: the API client, output streams and their styles, and whether bars may show. */
export interface Context {
  client: ApiClient;
  /** Colours for stdout (tables) and stderr (messages): each only on its own terminal. */
  style: Style;
  errStyle: Style;
  bars: boolean;
  json: boolean;
  quiet: boolean;
  /** One line on stdout. */
  print(text: string): void;
  /** One line on stderr (progress notes, warnings); silent with `--quiet`. */
  note(text: string): void;
}

/**
 * The connection from flags, else `VULN_TRIAGE_URL` / `VULN_TRIAGE_API_KEY`. This program is a
 * client, not the service: it reads its own two variables, never the server's configuration.
 */
export function resolveConnection(opts: GlobalOptions, env: NodeJS.ProcessEnv): Connection {
  const baseUrl = (opts.url ?? env.VULN_TRIAGE_URL ?? '').trim();
  const apiKey = (opts.apiKey ?? env.VULN_TRIAGE_API_KEY ?? '').trim();
  if (!baseUrl)
    throw usageError(
      'No service address: pass --url or set VULN_TRIAGE_URL (e.g. https://triage.example.com).',
    );
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw usageError(`--url / VULN_TRIAGE_URL is not a URL: ${baseUrl}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw usageError(`--url / VULN_TRIAGE_URL must be http(s): ${baseUrl}`);
  }
  if (!apiKey) throw usageError('No API key: pass --api-key or set VULN_TRIAGE_API_KEY.');
  return { baseUrl, apiKey };
}

/** The retry policy, with `--retries` (or `VULN_TRIAGE_RETRIES`) and `VULN_TRIAGE_RETRY_BASE_MS` applied. */
export function resolveRetry(opts: GlobalOptions, env: NodeJS.ProcessEnv): RetryPolicy {
  const retries = opts.retries ?? env.VULN_TRIAGE_RETRIES;
  const base = env.VULN_TRIAGE_RETRY_BASE_MS;
  const policy = { ...DEFAULT_RETRY };
  if (retries !== undefined) {
    if (!/^\d{1,2}$/.test(retries))
      throw usageError(`--retries must be a whole number from 0 to 99, not ${retries}`);
    policy.attempts = Number(retries) + 1;
  }
  if (base !== undefined && /^\d{1,6}$/.test(base)) policy.baseDelayMs = Number(base);
  return policy;
}

export function makeContext(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Context {
  const json = opts.json === true;
  const quiet = opts.quiet === true;
  const errStyle = makeStyle(colourEnabled(process.stderr, env));
  const note = (text: string) => {
    if (!quiet) process.stderr.write(`${text}\n`);
  };
  return {
    client: new ApiClient(resolveConnection(opts, env), resolveRetry(opts, env), (m) =>
      note(errStyle.yellow(m)),
    ),
    style: makeStyle(colourEnabled(process.stdout, env)),
    errStyle,
    bars: barsEnabled({ json, quiet }),
    json,
    quiet,
    print: (text) => process.stdout.write(`${text}\n`),
    note,
  };
}
