import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { scrubUrl } from '../../lib/logger.js';

/**
 * Fastify's per-request logging for a person watching `npm start`: one short line per answered
 * request, `METHOD url status ms`, instead of the two JSON lines ("incoming request", "request
 * completed") kept for `web`/`worker`. A request that errored is logged at `error` with its
 * error. Key-shaped strings and reveal tokens in the URL are masked as everywhere in our logs.
 */
export class RequestLineLogController extends LogController {
  override incomingRequest(): void {
    // The completed line says everything a person needs.
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = `${request.method} ${scrubUrl(request.url)} ${reply.statusCode} ${Math.round(reply.elapsedTime)} ms`;
    if (error) reply.log.error({ err: error }, line);
    else reply.log.info(line);
  }
}
