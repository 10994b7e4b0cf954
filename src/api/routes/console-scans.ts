import type { FastifyInstance } from 'fastify';
import multipart from '@fastify/multipart';
import type { AppDeps } from '../app-deps.js';
import { AppError, notFound } from '../../lib/errors.js';
import { effectivePlan } from '../../domain/plans/plans.js';
import { tooLarge } from '../../domain/scans/receive-scan.js';
import { checkFreeSpace } from '../../domain/scans/upload-gate.js';
import type { Scan, ScanStatus } from '../../domain/scans/scan-store.js';
import { viewScan } from '../../domain/scans/views.js';
import { billingKeyOf } from '../../domain/keys/billing-key.js';
import type { ScanRouteDeps } from './scans.js';
import { invalidRequest } from '../../lib/errors.js';
import { DEFAULT_LIMIT, idParams, type UploadQuery } from '../schemas/scans.js';
import { consoleScansQuery, consoleUploadQuery } from '../schemas/console-data.js';
import { MULTIPART_OVERHEAD, assetContextOf, uploadStream } from './scans.js';
import { consoleScanList, consoleScanView } from '../schemas/console-responses.js';
import { SESSION_ROUTE_ERRORS, responses } from '../schemas/responses.js';

/** A scan as the console shows it: the API's view (with its triage) plus the key it was uploaded as. */
async function viewConsoleScan(scans: Pick<ScanRouteDeps, 'triageView'>, s: Scan) {
  return { ...viewScan(s), triage: await scans.triageView(s), keyId: s.keyId };
}

/**
 * The Scans page's JSON (issue 16): the workspace's scans newest first, one scan, and an upload
 * from the browser (multipart, field `file`, options in the query string as on
 * `POST /api/pipeline/scan`). The console user is the workspace's owner, so the session grants
 * what `scans:read` and `scans:write` grant; the upload is recorded without a key.
 */
export function consoleScanRoutes(
  app: FastifyInstance,
  deps: Pick<AppDeps, 'clock' | 'config' | 'keys' | 'scans' | 'workspaces'>,
): void {
  const listSchema = {
    summary: "The workspace's scans, newest first",
    querystring: consoleScansQuery,
    response: responses({ 200: consoleScanList }, SESSION_ROUTE_ERRORS),
  };
  app.get('/scans', { schema: listSchema }, async (req, reply) => {
    const q = req.query as { limit?: number; cursor?: string; status?: ScanStatus };
    const page = await deps.scans.list(req.session.workspaceId, {
      ...q,
      limit: q.limit ?? DEFAULT_LIMIT,
    });
    void reply.header('Cache-Control', 'no-store');
    const data = await Promise.all(page.data.map((s) => viewConsoleScan(deps.scans, s)));
    return { object: 'list', data, nextCursor: page.nextCursor };
  });

  const scanSchema = {
    summary: 'One scan',
    params: idParams,
    response: responses({ 200: consoleScanView }, [...SESSION_ROUTE_ERRORS, 404]),
  };
  app.get('/scans/:id', { schema: scanSchema }, async (req, reply) => {
    const scan = await deps.scans.get(req.session.workspaceId, (req.params as { id: string }).id);
    if (!scan) throw notFound('scan');
    void reply.header('Cache-Control', 'no-store');
    return viewConsoleScan(deps.scans, scan);
  });

  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    await scope.register(multipart, { limits: { files: 1, fields: 10, parts: 12 } });
    scope.addContentTypeParser('*', (_req, _payload, done) =>
      done(
        new AppError(
          'unsupported_media_type',
          'Send the scan as multipart/form-data with the file in "file".',
        ),
      ),
    );
    scope.addHook('onError', async (req, reply) => {
      if (!req.raw.complete) void reply.header('Connection', 'close');
    });
    const limitOf = async (workspaceId: string): Promise<number> =>
      effectivePlan(await deps.workspaces.workspaceOf(workspaceId), deps.config.plans, deps.clock()).limits
        .scanMaxBytes;

    scope.post(
      '/scans',
      {
        schema: {
          summary: 'Upload a scan from the browser (multipart, field `file`)',
          querystring: consoleUploadQuery,
          'x-raw-body': {
            description: 'The scan file in the multipart field `file`.',
            consumes: ['multipart/form-data'],
          },
          response: responses({ 202: consoleScanView }, [...SESSION_ROUTE_ERRORS, 408, 413, 415]),
        },
        preParsing: async (req) => {
          const declared = Number(req.headers['content-length'] ?? NaN);
          const max = await limitOf(req.session.workspaceId);
          if (Number.isFinite(declared) && declared > max + MULTIPART_OVERHEAD) throw tooLarge(max);
        },
      },
      async (req, reply) => {
        const q = req.query as UploadQuery & { key?: string };
        const triage = q.triage ?? 'none';
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
              await deps.keys.listKeys(req.session.workspaceId),
              q.key,
              triage === 'none' ? ['scans:write'] : ['scans:write', 'triage:write'],
              deps.clock(),
              '/querystring/key',
            )
          : null;
        const maxBytes = await limitOf(req.session.workspaceId);
        const workspaceId = req.session.workspaceId;
        // The same bounds as the pipeline upload: a place among the process's uploads, room on disk.
        const release = deps.scans.uploadGate.enter(workspaceId);
        let accepted;
        try {
          const declared = Number(req.headers['content-length'] ?? NaN);
          checkFreeSpace(
            await deps.scans.storage.freeBytes(),
            Number.isFinite(declared) ? declared : null,
            deps.scans.uploadLimits.minFreeBytes,
          );
          const body = await uploadStream(req, maxBytes);
          accepted = await deps.scans.accept({
            workspaceId,
            keyId: key?.id ?? null,
            body,
            gzip: false,
            maxBytes,
            limits: deps.scans.uploadLimits,
            format: q.format ?? null,
            name: q.name ?? null,
            asset: assetContextOf(q),
            idempotencyKey: null,
            triage,
          });
        } finally {
          release();
        }
        const { scan } = accepted;
        return reply
          .code(202)
          .header('Cache-Control', 'no-store')
          .send(await viewConsoleScan(deps.scans, scan));
      },
    );
  });
}
