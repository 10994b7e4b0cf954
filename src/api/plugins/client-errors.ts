import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../lib/errors.js';
import { problemOf } from './problem.js';

/**
 * The answers written before a route runs, as problem documents like every other answer
 * (docs/operations.md#failure-behaviour): Fastify's own (a URL it cannot decode) through its
 * `frameworkErrors` option, and Node's HTTP parser's (a header section too large, a request that
 * is not valid HTTP/1.1, a request that stalls before its headers end) through `clientError`.
 * Fastify's defaults answer these with `{"error", "statusCode"}` JSON and its own `FST_` codes.
 */

/** Fastify's `frameworkErrors` option: errors met while routing, before the request has a route. */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const detail =
    err.code === 'FST_ERR_BAD_URL'
      ? 'The URL is not valid: a percent sign must start a %XX escape.'
      : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'A part of the URL is longer than this service accepts.'
        : null;
  if (detail === null) {
    req.log.error({ err }, 'unexpected routing error');
    void reply
      .code(500)
      .type('application/problem+json')
      .send(
        problemOf(
          'internal_error',
          'Something went wrong on our side; the request id helps us find it.',
          req.id,
        ),
      );
    return;
  }
  void reply
    .code(400)
    .type('application/problem+json')
    .send(problemOf('invalid_request', detail, req.id));
}

/** What Node's parser error becomes: the code and the sentence the client reads. */
function clientProblem(err: NodeJS.ErrnoException): { code: ErrorCode; detail: string } {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return { code: 'request_timeout', detail: 'The request was not received in time.' };
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'header_too_large',
        detail: 'The request headers are larger than this service accepts.',
      };
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      // llhttp gives one code for both: only its message tells a conflict from a bad value.
      return /Transfer-Encoding/i.test(err.message)
        ? {
            code: 'invalid_request',
            detail: 'Send a body with either Content-Length or Transfer-Encoding: chunked, not both.',
          }
        : { code: 'invalid_request', detail: 'The Content-Length or Transfer-Encoding header is not valid.' };
    default:
      return { code: 'invalid_request', detail: 'The request is not valid HTTP/1.1.' };
  }
}

/**
 * Fastify's `clientErrorHandler` option: Node's `clientError`, for a request its parser refused.
 * No request object exists, so the answer is written to the socket, which is then closed (the
 * parser cannot find where the next request would begin). The requestId is made here and
 * logged, so a client's report can still be matched with the log.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const requestId = randomUUID();
  const { code, detail } = clientProblem(err);
  const problem = problemOf(code, detail, requestId);
  this.log.info(
    { requestId, parserError: err.code, status: problem.status },
    'request refused by the HTTP parser',
  );
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(problem);
  // end(), not write() then destroy(): the answer is flushed before the socket closes.
  socket.end(
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}\r\n` +
      'Content-Type: application/problem+json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
