import { createReadStream } from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable, type Transform } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createGunzip } from 'node:zlib';
import { EnrichmentImportError } from './import-error.js';

/**
 * Where a feed comes from (docs/triage.md#enrichment: configurable sources, a URL or a file).
 * `url` is fetched when it is http(s); a `file:` URL is read as a file.
 */
export type EnrichmentSource = { url: string } | { file: string };

/** The public locations of the feeds, for configuration defaults. */
export const PUBLIC_FEED_URLS = {
  kev: 'https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json',
  epss: 'https://epss.empiricalsecurity.com/epss_scores-current.csv.gz',
  nvdModified: 'https://nvd.nist.gov/feeds/json/cve/2.0/nvdcve-2.0-modified.json.gz',
} as const;

export interface OpenSourceOptions {
  /** Aborts the download (e.g. the job's shutdown signal). */
  signal?: AbortSignal;
  /**
   * Longest a download may take, body included, so a stalled server cannot hang the daily job.
   * @defaultValue 600_000 (10 minutes)
   */
  timeoutMs?: number;
}

const GZIP_MAGIC = [0x1f, 0x8b] as const;

/**
 * An opened source: put `body` then `decode` at the head of one `pipeline()`, so an error
 * of either stage (a failed download, corrupt gzip) rejects that pipeline and nothing else.
 */
export interface OpenedSource {
  body: Readable;
  /** A gunzip when the content starts with the gzip magic, otherwise a pass-through. */
  decode: Transform;
  gzip: boolean;
}

/**
 * The source as it may be logged and stored in `enrichment_imports.origin`: a URL without
 * credentials, query or fragment (a signed URL's token must not end up in the table), or the
 * base name of a file.
 */
export function describeOrigin(source: EnrichmentSource): string {
  if ('url' in source) {
    try {
      const u = new URL(source.url);
      if (u.protocol === 'file:') return path.basename(fileURLToPath(u));
      return `${u.protocol}//${u.host}${u.pathname}`;
    } catch {
      return '(invalid URL)';
    }
  }
  return path.basename(source.file);
}

/** Reads a command-line or configuration value: http(s) and file URLs are URLs, anything else a path. */
export function sourceFromArgument(value: string): EnrichmentSource {
  return /^(https?|file):\/\//i.test(value) ? { url: value } : { file: value };
}

/**
 * Opens a source as a byte stream, gunzipped when its first bytes are the gzip magic
 * (1f 8b): a feed's name says nothing reliable about its encoding, and `fetch` only
 * decodes a transfer `Content-Encoding`, not a `.gz` file served as-is.
 * Rejects when the file cannot be opened or the server does not answer 2xx.
 */
export async function openSource(
  source: EnrichmentSource,
  options: OpenSourceOptions = {},
): Promise<OpenedSource> {
  const raw = await openRaw(source, options);
  const iterator = raw[Symbol.asyncIterator]();
  const head: Uint8Array[] = [];
  let headBytes = 0;
  let ended = false;
  try {
    while (headBytes < GZIP_MAGIC.length) {
      const next = await iterator.next();
      if (next.done) {
        ended = true;
        break;
      }
      head.push(next.value);
      headBytes += next.value.length;
    }
  } catch (err) {
    await iterator.return?.();
    throw err;
  }
  const first = Buffer.concat(head);
  const body = Readable.from(replay(first, ended ? null : iterator), { objectMode: false });
  const gzip = first[0] === GZIP_MAGIC[0] && first[1] === GZIP_MAGIC[1];
  return { body, decode: gzip ? createGunzip() : new PassThrough(), gzip };
}

async function* replay(first: Buffer, rest: AsyncIterator<Uint8Array> | null): AsyncGenerator<Uint8Array> {
  try {
    if (first.length > 0) yield first;
    if (rest === null) return;
    for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
  } finally {
    // Cancels the download or closes the file when the reader stops early.
    await rest?.return?.();
  }
}

async function openRaw(
  source: EnrichmentSource,
  options: OpenSourceOptions,
): Promise<AsyncIterable<Uint8Array>> {
  if ('file' in source) {
    if (!source.file) throw new EnrichmentImportError('invalid_source', 'empty file name');
    return createReadStream(source.file);
  }
  let url: URL;
  try {
    url = new URL(source.url);
  } catch {
    throw new EnrichmentImportError('invalid_source', 'not a valid URL');
  }
  if (url.protocol === 'file:') return createReadStream(fileURLToPath(url));
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EnrichmentImportError('invalid_source', `unsupported URL scheme ${url.protocol}`);
  }
  const headers: Record<string, string> = { accept: '*/*' };
  if (url.username || url.password) {
    // fetch refuses URLs with credentials; send them as HTTP Basic instead.
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  let response: Response;
  try {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 600_000);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    response = await fetch(url, { headers, redirect: 'follow', signal });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why =
      (err as Error).name === 'TimeoutError'
        ? 'timed out'
        : (cause?.code ?? cause?.message ?? (err as Error).message);
    throw new EnrichmentImportError('source_unavailable', `download failed (${why})`, { cause: err });
  }
  if (!response.ok || response.body === null) {
    await response.body?.cancel().catch(() => undefined);
    throw new EnrichmentImportError('source_unavailable', `the server answered HTTP ${response.status}`);
  }
  return response.body as unknown as AsyncIterable<Uint8Array>;
}
