import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { AppError, notFound } from '../../lib/errors.js';
import type { QueueHandle } from '../../jobs/queue-kit.js';
import type { ScanIngestPayload } from '../../jobs/scan-ingest.js';
import { tooLarge } from '../../domain/scans/receive-scan.js';
import type { ScanStorage } from '../../domain/scans/scan-storage.js';
import { checkFreeSpace, type UploadGate } from '../../domain/scans/upload-gate.js';
import type { UploadLimits } from '../../lib/config.js';
import type { AssetContext, ScanStatus } from '../../domain/scans/scan-store.js';
import type { ScanService } from '../../domain/scans/scan-service.js';
import { viewScan } from '../../domain/scans/views.js';
import type { ScanTriageView } from '../../domain/triage/case-batch-store.js';
import { DEFAULT_LIMIT, idParams, listScansQuery, uploadQuery, type UploadQuery } from '../schemas/scans.js';
import { scanAccepted, scanList, scanView } from '../schemas/scans-responses.js';
import { KEY_ROUTE_ERRORS, responses } from '../schemas/responses.js';

/**
 * What the scan routes need, built once by `app/services.ts`: the scan service (reads and the
 * upload, bound to the pool and the `scan-ingest` queue) and what the upload's bounds read.
 */
export interface ScanRouteDeps extends ScanService {
  /** The triage a scan's upload asked for, as the scan's view shows it. */
  triageView(scan: { id: string; workspaceId: string }): Promise<ScanTriageView | null>;
  storage: ScanStorage;
  /** The `scan-ingest` queue the service enqueues on (the same queue, opened once). */
  queue: QueueHandle<ScanIngestPayload>;
  /** Concurrent uploads of this process, per workspace and in all (issue 11 §4). */
  uploadGate: UploadGate;
  uploadLimits: UploadLimits;
}

/** The asset context an upload's query gives its findings (DECISIONS §8), for both upload routes. */
export function assetContextOf(q: UploadQuery): AssetContext {
  return {
    name: q.asset ?? null,
    environment: q.environment ?? null,
    criticality: q.criticality ?? null,
    internetExposed: q.internetExposed ?? null,
  };
}

/** Raw-body content types of DECISIONS §8 (text/xml too: what curl and many CI tools send for XML). */
const RAW_TYPES = [
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
const STRUCTURED_SUFFIX = /^[\w!#$%&'*.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\+(?:json|xml)(?:;|$)/;

const ACCEPTED_TYPES =
  'application/xml, text/xml, application/json, application/x-ndjson, any +xml or +json type (such as application/vnd.cyclonedx+json), application/octet-stream, application/gzip or multipart/form-data (field "file")';

/** Room for multipart boundaries and part headers on top of the file itself. */
export const MULTIPART_OVERHEAD = 64 * 1024;

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * `POST /api/pipeline/scan` and `GET /api/pipeline/scan/:id` (DECISIONS §8), mounted by
 * `buildApp` under `/api/pipeline`. The upload lives in its own plugin scope whose content-type parsers hand the
 * raw request stream to the handler, so a 2 GiB scan is streamed to storage, never buffered.
 */
export function registerScanPipelineRoutes(app: FastifyInstance, deps: ScanRouteDeps): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    await scope.register(multipart, { limits: { files: 1, fields: 10, parts: 12 } });
    scope.addContentTypeParser(RAW_TYPES, (_req, payload, done) => done(null, payload));
    scope.addContentTypeParser(STRUCTURED_SUFFIX, (_req, payload, done) => done(null, payload));
    scope.addContentTypeParser('*', (req, _payload, done) =>
      done(
        new AppError(
          'unsupported_media_type',
          `Send the scan as ${ACCEPTED_TYPES}, not ${String(req.headers['content-type'] ?? 'no Content-Type')}.`,
        ),
      ),
    );
    // Any refusal that leaves the body unread (413 before or mid-stream, a multipart body without
    // its file, an upload given up on) closes the connection after the answer: on keep-alive Node
    // would otherwise read and discard the rest of the body, up to gigabytes, first.
    scope.addHook('onError', async (req, reply) => {
      if (!req.raw.complete) void reply.header('Connection', 'close');
    });

    scope.post(
      '/scan',
      {
        config: { scope: 'scans:write' },
        schema: {
          summary: 'Upload a scan',
          description:
            'The file as the raw body or as the multipart field `file` (`curl -F file=@scan.xml`); gzip as `Content-Encoding: gzip` or by its magic bytes. The format is detected from the content (or `format=`), never from the media type. `Idempotency-Key` makes a retry return the same scan.',
          querystring: uploadQuery,
          headers: {
            type: 'object',
            properties: {
              'idempotency-key': {
                type: 'string',
                description: '1 to 255 visible ASCII characters; same key and bytes: the same scan.',
              },
            },
          },
          // Documented only: the body is a stream the handler reads (see plugins/openapi.ts).
          'x-raw-body': {
            description: `The scan file: ${ACCEPTED_TYPES}.`,
            consumes: [
              ...RAW_TYPES,
              'application/sarif+json',
              'application/vnd.cyclonedx+json',
              'application/vnd.cyclonedx+xml',
              'multipart/form-data',
            ],
          },
          response: responses({ 202: scanAccepted }, [...KEY_ROUTE_ERRORS, 408, 409, 413, 415]),
        },
        // Before the body is touched: refuse what Content-Length already says is too big. The
        // connection is closed after the answer: on keep-alive Node would otherwise read (and
        // discard) the whole declared body before the socket could serve another request.
        preParsing: async (req) => {
          const declared = Number(req.headers['content-length'] ?? NaN);
          const limit = req.plan.limits.scanMaxBytes + (req.isMultipart() ? MULTIPART_OVERHEAD : 0);
          if (Number.isFinite(declared) && declared > limit) throw tooLarge(req.plan.limits.scanMaxBytes);
        },
      },
      async (req, reply) => {
        const q = req.query as UploadQuery;
        // Triage spends AI calls billed to this key (DECISIONS §4, §8): it needs triage:write too.
        if (q.triage && q.triage !== 'none' && !req.apiKey.scopes.includes('triage:write')) {
          throw new AppError(
            'insufficient_scope',
            'Uploading with triage=new or triage=all needs a key with the triage:write scope.',
          );
        }
        const idempotencyKey = headerValue(req, 'idempotency-key');
        if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
          throw new AppError(
            'invalid_request',
            'The Idempotency-Key header must be 1 to 255 visible ASCII characters.',
            {
              errors: [
                { path: '/headers/idempotency-key', message: 'must be 1 to 255 visible ASCII characters' },
              ],
            },
          );
        }
        const maxBytes = req.plan.limits.scanMaxBytes;
        const { scan } = await withUploadPlace(deps, req, req.apiKey.workspace.id, async () => {
          const body = await uploadStream(req, maxBytes);
          const encoding = (headerValue(req, 'content-encoding') ?? 'identity').toLowerCase();
          if (encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'x-gzip') {
            throw new AppError('unsupported_media_type', 'Content-Encoding may be gzip or absent.');
          }
          return deps.accept({
            workspaceId: req.apiKey.workspace.id,
            keyId: req.apiKey.id,
            body,
            gzip: encoding !== 'identity' && !req.isMultipart(),
            maxBytes,
            limits: deps.uploadLimits,
            format: q.format ?? null,
            name: q.name ?? null,
            asset: assetContextOf(q),
            idempotencyKey,
            triage: q.triage ?? 'none',
          });
        });
        return reply
          .code(202)
          .send({ scanId: scan.id, status: scan.status, statusUrl: `/api/pipeline/scan/${scan.id}` });
      },
    );
  });

  const scanSchema = {
    summary: 'A scan and its parse progress',
    params: idParams,
    response: responses({ 200: scanView }, [...KEY_ROUTE_ERRORS, 404]),
  };
  app.get('/scan/:id', { config: { scope: 'scans:read' }, schema: scanSchema }, async (req) => {
    const scan = await deps.get(req.apiKey.workspace.id, (req.params as { id: string }).id);
    if (!scan) throw notFound('scan');
    return { ...viewScan(scan), triage: await deps.triageView(scan) };
  });
}

/** `GET /api/v1/scans`, mounted by `buildApp` in the `/api/v1` scope. */
export function registerScanListRoutes(
  app: FastifyInstance,
  deps: Pick<ScanRouteDeps, 'get' | 'list' | 'triageView'>,
): void {
  app.get(
    '/scans',
    {
      config: { scope: 'scans:read' },
      schema: {
        summary: 'List scans',
        querystring: listScansQuery,
        response: responses({ 200: scanList }, KEY_ROUTE_ERRORS),
      },
    },
    async (req) => {
      const q = req.query as { limit?: number; cursor?: string; status?: ScanStatus };
      const page = await deps.list(req.apiKey.workspace.id, {
        ...q,
        limit: q.limit ?? DEFAULT_LIMIT,
      });
      return { object: 'list', data: page.data.map(viewScan), nextCursor: page.nextCursor };
    },
  );

  const scanSchema = {
    summary: 'One scan',
    params: idParams,
    response: responses({ 200: scanView }, [...KEY_ROUTE_ERRORS, 404]),
  };
  app.get('/scans/:id', { config: { scope: 'scans:read' }, schema: scanSchema }, async (req) => {
    const scan = await deps.get(req.apiKey.workspace.id, (req.params as { id: string }).id);
    if (!scan) throw notFound('scan');
    return { ...viewScan(scan), triage: await deps.triageView(scan) };
  });
}

/**
 * Runs an upload of `workspaceId` in one of the process's upload places, after checking that
 * storage has room for it (issue 11 §4): refused before a byte of the body is read (429 past
 * the workspace's places, 503 past the process's or when the disk is nearly full).
 */
export async function withUploadPlace<T>(
  deps: Pick<ScanRouteDeps, 'uploadGate' | 'uploadLimits' | 'storage'>,
  req: FastifyRequest,
  workspaceId: string,
  run: () => Promise<T>,
): Promise<T> {
  const release = deps.uploadGate.enter(workspaceId);
  try {
    const declared = Number(req.headers['content-length'] ?? NaN);
    checkFreeSpace(
      await deps.storage.freeBytes(),
      Number.isFinite(declared) ? declared : null,
      deps.uploadLimits.minFreeBytes,
    );
    return await run();
  } finally {
    release();
  }
}

function headerValue(req: FastifyRequest, name: string): string | null {
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
  const body = req.body as Readable | undefined;
  if (!body || typeof (body as Partial<Readable>).pipe !== 'function') {
    throw new AppError('invalid_request', 'The scan file is empty.');
  }
  return body;
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
