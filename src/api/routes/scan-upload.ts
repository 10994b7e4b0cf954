import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { AppDeps } from '../app-deps.js';
import { AppError, invalidRequest } from '../../lib/errors.js';
import { effectivePlan } from '../../domain/plans/plans.js';
import { billingKeyOf } from '../../domain/keys/billing-key.js';
import { tooLarge } from '../../domain/scans/receive-scan.js';
import type { AssetContext } from '../../domain/scans/scan-store.js';
import type { UploadScanInput } from '../../domain/scans/upload-scan.js';
import { typed } from '../typed-app.js';
import type { Surface } from './surface.js';
import { viewScanOf } from './scans.js';
import { uploadQuery } from '../schemas/scans.js';
import { consoleUploadQuery } from '../schemas/console-data.js';
import { scanAccepted } from '../schemas/scans-responses.js';
import { consoleScanView } from '../schemas/console-responses.js';
import { responses } from '../schemas/responses.js';
import {
  ACCEPTED_TYPES,
  MULTIPART_OVERHEAD,
  RAW_TYPES,
  STRUCTURED_SUFFIX,
  declaredLength,
  headerValue,
  uploadStream,
} from './upload-body.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The asset context an upload's query gives its findings (docs/ingestion.md#asset-context). */
export function assetContextOf(q: {
  asset?: string;
  environment?: AssetContext['environment'];
  criticality?: AssetContext['criticality'];
  internetExposed?: boolean;
}): AssetContext {
  return {
    name: q.asset ?? null,
    environment: q.environment ?? null,
    criticality: q.criticality ?? null,
    internetExposed: q.internetExposed ?? null,
  };
}

/**
 * The upload's plugin scope: only the body types the surface takes, each handed to the handler
 * as the raw stream, so a 2 GiB scan is streamed to storage, never buffered. Any refusal that
 * leaves the body unread (413 before or mid-stream, a multipart body without its file, an upload
 * given up on) closes the connection after the answer: on keep-alive Node would otherwise read
 * and discard the rest of the body, up to gigabytes, first.
 */
async function uploadScope(scope: FastifyInstance, raw: boolean, refusal: (req: FastifyRequest) => string) {
  scope.removeAllContentTypeParsers();
  await scope.register(multipart, { limits: { files: 1, fields: 10, parts: 12 } });
  if (raw) {
    scope.addContentTypeParser(RAW_TYPES, (_req, payload, done) => done(null, payload));
    scope.addContentTypeParser(STRUCTURED_SUFFIX, (_req, payload, done) => done(null, payload));
  }
  scope.addContentTypeParser('*', (req, _payload, done) =>
    done(new AppError('unsupported_media_type', refusal(req))),
  );
  scope.addHook('onError', async (req, reply) => {
    if (!req.raw.complete) void reply.header('Connection', 'close');
  });
}

/**
 * `POST /api/pipeline/scan` (docs/ingestion.md#upload): the file as the raw body or the
 * multipart field `file`, gzip allowed, `Idempotency-Key` honoured; `scans:write`, and
 * `triage:write` too when the upload asks for triage (its AI calls are billed to this key).
 */
export function registerPipelineUploadRoute(
  app: FastifyInstance,
  deps: Pick<AppDeps, 'scans'>,
  surface: Surface,
): void {
  void app.register(async (scope) => {
    await uploadScope(
      scope,
      true,
      (req) =>
        `Send the scan as ${ACCEPTED_TYPES}, not ${String(req.headers['content-type'] ?? 'no Content-Type')}.`,
    );
    const schema = {
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
      response: responses({ 202: scanAccepted }, [...surface.errors, 408, 409, 413, 415]),
    } as const;
    typed(scope).post(
      '/scan',
      {
        config: surface.needs('scans:write'),
        schema,
        // Before the body is touched: refuse what Content-Length already says is too big.
        preParsing: async (req) => {
          const declared = declaredLength(req);
          const limit = req.plan.limits.scanMaxBytes + (req.isMultipart() ? MULTIPART_OVERHEAD : 0);
          if (declared !== null && declared > limit) throw tooLarge(req.plan.limits.scanMaxBytes);
        },
      },
      async (req, reply) => {
        const q = req.query;
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
        const { scan } = await deps.scans.upload({
          ...uploadOf(req, q, maxBytes),
          workspaceId: surface.workspaceOf(req),
          keyId: surface.keyOf(req),
          idempotencyKey,
          open: async () => {
            const body = await uploadStream(req, maxBytes);
            const encoding = (headerValue(req, 'content-encoding') ?? 'identity').toLowerCase();
            if (encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'x-gzip') {
              throw new AppError('unsupported_media_type', 'Content-Encoding may be gzip or absent.');
            }
            return { body, gzip: encoding !== 'identity' && !req.isMultipart() };
          },
        });
        return reply
          .code(202)
          .send({ scanId: scan.id, status: scan.status, statusUrl: `/api/pipeline/scan/${scan.id}` });
      },
    );
  });
}

/**
 * `POST /api/console/scans`: an upload from the browser (multipart, field `file`, options in
 * the query string as on `POST /api/pipeline/scan`), recorded as the key `key` when given, which
 * triage's AI calls are billed to (required with `triage=new|all`).
 */
export function registerConsoleUploadRoute(
  app: FastifyInstance,
  deps: Pick<AppDeps, 'clock' | 'config' | 'keys' | 'scans' | 'workspaces'>,
  surface: Surface,
): void {
  const limitOf = async (workspaceId: string): Promise<number> =>
    effectivePlan(await deps.workspaces.workspaceOf(workspaceId), deps.config.plans, deps.clock()).limits
      .scanMaxBytes;

  void app.register(async (scope) => {
    await uploadScope(scope, false, () => 'Send the scan as multipart/form-data with the file in "file".');
    const schema = {
      summary: 'Upload a scan from the browser (multipart, field `file`)',
      querystring: consoleUploadQuery,
      'x-raw-body': {
        description: 'The scan file in the multipart field `file`.',
        consumes: ['multipart/form-data'],
      },
      response: responses({ 202: consoleScanView }, [...surface.errors, 408, 413, 415]),
    } as const;
    typed(scope).post(
      '/scans',
      {
        config: surface.needs('scans:write'),
        schema,
        preParsing: async (req) => {
          const declared = declaredLength(req);
          const max = await limitOf(surface.workspaceOf(req));
          if (declared !== null && declared > max + MULTIPART_OVERHEAD) throw tooLarge(max);
        },
      },
      async (req, reply) => {
        const q = req.query;
        const triage = q.triage ?? 'none';
        const workspaceId = surface.workspaceOf(req);
        // Before the body is read: a refused upload costs nothing.
        if (triage !== 'none' && !q.key) {
          throw invalidRequest([
            {
              path: '/querystring/key',
              message: 'is required with triage=new or triage=all (the key the AI calls are billed to)',
            },
          ]);
        }
        const key = q.key
          ? billingKeyOf(
              await deps.keys.listKeys(workspaceId),
              q.key,
              triage === 'none' ? ['scans:write'] : ['scans:write', 'triage:write'],
              deps.clock(),
              '/querystring/key',
            )
          : null;
        const maxBytes = await limitOf(workspaceId);
        const { scan } = await deps.scans.upload({
          ...uploadOf(req, q, maxBytes),
          workspaceId,
          keyId: key?.id ?? null,
          idempotencyKey: null,
          open: async () => ({ body: await uploadStream(req, maxBytes), gzip: false }),
        });
        return reply
          .code(202)
          .header('Cache-Control', 'no-store')
          .send(await viewScanOf(deps.scans, surface, scan));
      },
    );
  });
}

/** What both upload routes read alike from the request: its size, its options, its bound. */
function uploadOf(
  req: FastifyRequest,
  q: {
    format?: UploadScanInput['format'];
    name?: string;
    triage?: UploadScanInput['triage'];
    resolveMissing?: boolean;
  } & Parameters<typeof assetContextOf>[0],
  maxBytes: number,
): Pick<
  UploadScanInput,
  'declaredBytes' | 'maxBytes' | 'format' | 'name' | 'asset' | 'triage' | 'resolveMissing'
> {
  return {
    declaredBytes: declaredLength(req),
    maxBytes,
    format: q.format ?? null,
    name: q.name ?? null,
    asset: assetContextOf(q),
    triage: q.triage ?? 'none',
    resolveMissing: q.resolveMissing ?? true,
  };
}
