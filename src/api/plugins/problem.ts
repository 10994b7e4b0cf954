import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { scrubUrl } from '../../lib/logger.js';
import { databaseUnavailable, isConnectionLost } from '../../db/connection-errors.js';
import { patternMessage } from '../../lib/schema-patterns.js';
import {
  AppError,
  INVALID_FIELDS_DETAIL,
  ERROR_STATUS,
  ERROR_TITLES,
  type ErrorCode,
  type FieldError,
} from '../../lib/errors.js';

/**
 * Every error leaves as an RFC 9457 problem document (docs/api.md#errors). This is the only
 * place that turns errors into HTTP: AppErrors keep their code, validation and parser
 * errors become 400/413/415, anything else is a 500 whose detail is never shown.
 */
export const PROBLEM_TYPE_BASE = 'https://docs.vulntriage.dev/errors/';

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  requestId: string;
  errors?: FieldError[];
}

export function problemOf(
  code: ErrorCode,
  detail: string,
  requestId: string,
  errors?: FieldError[],
): ProblemDocument {
  return {
    type: `${PROBLEM_TYPE_BASE}${code}`,
    title: ERROR_TITLES[code],
    status: ERROR_STATUS[code],
    code,
    detail,
    requestId,
    ...(errors ? { errors } : {}),
  };
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** One entry per failing field, with a JSON Pointer to it. */
export function fieldErrors(validation: AjvError[], part: string): FieldError[] {
  const prefix = part === 'body' ? '' : `/${part}`;
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of validation) {
    let path = `${prefix}${e.instancePath}`;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      path += `/${String(e.params.additionalProperty)}`;
      message = 'is not an allowed field';
    } else if (e.keyword === 'required') {
      path += `/${String(e.params.missingProperty)}`;
      message = 'is required';
    } else if (e.keyword === 'pattern') {
      message = patternMessage(String(e.params.pattern));
    } else if (e.keyword === 'enum') {
      message = `must be one of ${(e.params.allowedValues as unknown[]).map(String).join(', ')}`;
    } else if (
      e.keyword === 'errorMessage' ||
      e.keyword === 'if' ||
      e.keyword === 'anyOf' ||
      e.keyword === 'oneOf'
    ) {
      if (out.length > 0) continue;
    }
    const key = `${path}\u0000${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ path: path || '/', message });
    }
  }
  return out;
}

function send(reply: FastifyReply, problem: ProblemDocument, headers?: Record<string, string>): FastifyReply {
  if (headers) void reply.headers(headers);
  return reply.code(problem.status).type('application/problem+json').send(problem);
}

export const problemPlugin = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler(
      (err: FastifyError & { validationContext?: string }, req: FastifyRequest, reply: FastifyReply) => {
        if (err instanceof AppError) {
          return send(
            reply,
            problemOf(err.code, err.detail, req.id, err.options.errors),
            err.options.headers,
          );
        }
        if (err.validation) {
          const errors = fieldErrors(
            err.validation as unknown as AjvError[],
            err.validationContext ?? 'body',
          );
          return send(reply, problemOf('invalid_request', INVALID_FIELDS_DETAIL, req.id, errors));
        }
        switch (err.code) {
          case 'FST_ERR_CTP_BODY_TOO_LARGE':
            return send(
              reply,
              problemOf('payload_too_large', 'The request body is larger than this route accepts.', req.id),
            );
          case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
            return send(
              reply,
              problemOf(
                'unsupported_media_type',
                'Send this route a body of Content-Type application/json.',
                req.id,
              ),
            );
          case 'FST_ERR_CTP_EMPTY_JSON_BODY':
            return send(reply, problemOf('invalid_request', 'The JSON body is empty.', req.id));
          case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
            return send(
              reply,
              problemOf('invalid_request', 'Content-Length does not match the body.', req.id),
            );
        }
        if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
          return send(reply, problemOf('invalid_request', 'The body is not valid JSON.', req.id));
        }
        if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
          const code: ErrorCode =
            err.statusCode === 413
              ? 'payload_too_large'
              : err.statusCode === 415
                ? 'unsupported_media_type'
                : 'invalid_request';
          return send(reply, problemOf(code, 'The request could not be read.', req.id));
        }
        if (isConnectionLost(err)) {
          // A failover or a killed backend says nothing about this request: retry it later.
          req.log.warn({ err: err.message }, 'database connection lost');
          const unavailable = databaseUnavailable(err);
          return send(
            reply,
            problemOf(unavailable.code, unavailable.detail, req.id),
            unavailable.options.headers,
          );
        }
        req.log.error({ err }, 'unhandled error');
        return send(
          reply,
          problemOf(
            'internal_error',
            'Something went wrong on our side; the request id helps us find it.',
            req.id,
          ),
        );
      },
    );

    // Fastify's own answer while closing (`return503OnClosing`) is `{"error", "statusCode"}` JSON
    // without Retry-After; this is the same load shedding as a problem document.
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });
    app.addHook('onRequest', async (req, reply) => {
      if (!closing) return;
      await send(
        reply,
        problemOf('overloaded', 'This server is shutting down; retry, another will answer.', req.id),
        { 'Retry-After': '1', Connection: 'close' },
      );
      return reply;
    });

    app.setNotFoundHandler((req, reply) =>
      send(
        reply,
        problemOf('not_found', `No route ${req.method} ${scrubUrl(req.url.split('?')[0] ?? '')}.`, req.id),
      ),
    );
  },
  { name: 'problem' },
);
