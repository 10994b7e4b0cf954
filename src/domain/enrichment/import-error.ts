/**
 * Errors of the enrichment importers. The message is safe to log and to print in the admin
 * CLI: it names the feed and its origin (a URL without credentials or query, or a file
 * name) and what is wrong, never a stack or SQL.
 */

/** Which feed an import reads. Matches `enrichment_imports.source`. */
export type EnrichmentSourceKind = 'kev' | 'epss' | 'nvd' | 'vulnrichment';

/**
 * Stable codes:
 * - `invalid_source`: the source itself is unusable (no url/file, an unsupported URL scheme).
 * - `source_unavailable`: the file cannot be read, or the server did not answer 2xx.
 * - `malformed_input`: the content is not a valid feed of that kind; nothing was changed.
 * - `import_failed`: anything else (e.g. the database went away); nothing was changed.
 */
export type EnrichmentImportErrorCode =
  'invalid_source' | 'source_unavailable' | 'malformed_input' | 'import_failed';

export class EnrichmentImportError extends Error {
  override readonly name = 'EnrichmentImportError';

  constructor(
    readonly code: EnrichmentImportErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
  }
}

/** A problem with the content of a feed; `where` locates it (a line, an entry index, a CVE id). */
export function malformed(reason: string, where?: string): EnrichmentImportError {
  return new EnrichmentImportError('malformed_input', where ? `${where}: ${reason}` : reason);
}

const PG_DATA_ERROR_CLASSES = ['22', '23'];

/**
 * Turns whatever an import threw into one `EnrichmentImportError` whose message starts with
 * the feed and origin, so a log line or CLI line says which import failed and why.
 */
export function toImportError(
  kind: EnrichmentSourceKind,
  origin: string,
  err: unknown,
): EnrichmentImportError {
  const prefix = `${kind} import from ${origin} failed`;
  if (err instanceof EnrichmentImportError) {
    return new EnrichmentImportError(err.code, `${prefix}: ${err.message}`, { cause: err.cause ?? err });
  }
  const e = err as { code?: unknown; message?: unknown; detail?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const code = typeof e?.code === 'string' ? e.code : '';
  if (['ENOENT', 'EACCES', 'EISDIR', 'ENOTDIR'].includes(code)) {
    return new EnrichmentImportError('source_unavailable', `${prefix}: cannot read the file (${code})`, {
      cause: err,
    });
  }
  if ((err as { name?: unknown } | null)?.name === 'TimeoutError') {
    return new EnrichmentImportError('source_unavailable', `${prefix}: the download timed out`, {
      cause: err,
    });
  }
  if (code.startsWith('Z_') || code === 'ERR_ZLIB') {
    return new EnrichmentImportError('malformed_input', `${prefix}: corrupt gzip data (${message})`, {
      cause: err,
    });
  }
  if (/^Parser /.test(message)) {
    return new EnrichmentImportError('malformed_input', `${prefix}: invalid JSON (${message})`, {
      cause: err,
    });
  }
  if (code.length === 5 && PG_DATA_ERROR_CLASSES.includes(code.slice(0, 2))) {
    const detail = typeof e?.detail === 'string' ? ` ${e.detail}` : '';
    return new EnrichmentImportError(
      'malformed_input',
      `${prefix}: rejected by the database: ${message}.${detail}`,
      {
        cause: err,
      },
    );
  }
  return new EnrichmentImportError('import_failed', `${prefix}: ${message}`, { cause: err });
}
