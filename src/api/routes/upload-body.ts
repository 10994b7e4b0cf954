import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';

/**
 * Reading an upload's body in the upload routes (`scan-upload.ts`): the media types taken, the
 * declared size, and the file's byte stream from a raw body or a multipart part.
 */

/** Raw-body content types (docs/ingestion.md#upload; text/xml too: what curl and many CI tools send for XML). */
export const RAW_TYPES = [
  'application/xml',
  'text/xml',
  'application/json',
  'application/octet-stream',
  'application/gzip',
  'application/x-ndjson',
];

/**
 * Any media type with the `+json` or `+xml` structured-syntax suffix (RFC 6839), such as
 * `application/sarif+json` or `application/vnd.cyclonedx+xml`: the registered types of the very
 * formats we take, and JSON or XML underneath like the types above. Fastify tests it against the
 * normalised `type/subtype; params` string, so the suffix must end the subtype.
 */
export const STRUCTURED_SUFFIX = /^[\w!#$%&'*.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\+(?:json|xml)(?:;|$)/;

export const ACCEPTED_TYPES =
  'application/xml, text/xml, application/json, application/x-ndjson, any +xml or +json type (such as application/vnd.cyclonedx+json), application/octet-stream, application/gzip or multipart/form-data (field "file")';

/** Room for multipart boundaries and part headers on top of the file itself. */
export const MULTIPART_OVERHEAD = 64 * 1024;

/** The request's Content-Length, when it sent a usable one. */
export function declaredLength(req: FastifyRequest): number | null {
  const declared = Number(req.headers['content-length'] ?? NaN);
  return Number.isFinite(declared) ? declared : null;
}

/** A header's first value, or null when absent or empty. */
export function headerValue(req: FastifyRequest, name: string): string | null {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? null : s;
}

/**
 * The file's byte stream: the raw body, or the multipart part named `file`. A multipart body
 * refused here has not been read to its end: the scope's `onError` hook closes the connection.
 */
export async function uploadStream(req: FastifyRequest, maxBytes: number): Promise<Readable> {
  if (req.isMultipart()) {
    const part = await req
      .file({ limits: { fileSize: maxBytes + 1, files: 1 }, throwFileSizeLimit: false })
      .catch((err: unknown) => {
        throw malformedMultipart(err);
      });
    if (!part || part.fieldname !== 'file') {
      throw new AppError(
        'invalid_request',
        'Send the scan as a file in the multipart field "file" (curl -F file=@scan.xml).',
        { errors: [{ path: '/file', message: 'is required' }] },
      );
    }
    return part.file;
  }
  // The scope's content-type parsers hand over the request stream itself; no body at all is undefined.
  if (!isStream(req.body)) throw new AppError('invalid_request', 'The scan file is empty.');
  return req.body;
}

function isStream(body: unknown): body is Readable {
  return typeof body === 'object' && body !== null && 'pipe' in body && typeof body.pipe === 'function';
}

/**
 * What busboy throws for a body that is not multipart at all (no boundary, no part headers) is
 * a plain Error with no status, which would otherwise be answered 500. The plugin's own errors
 * (parts or fields over the limits) carry a 4xx status and keep it.
 */
function malformedMultipart(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return err;
  return new AppError(
    'invalid_request',
    'The multipart/form-data body could not be read (no boundary, malformed part headers or cut short).',
    { cause: err },
  );
}
