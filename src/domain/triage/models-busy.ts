import { AppError } from '../../lib/errors.js';

/**
 * Every model of the chain tried was at its rate limit (docs/operations.md#failure-behaviour):
 * 503 `overloaded` with `Retry-After` for a request, and for a batch item a wait, not a failure
 * (docs/triage.md#batch-triage). Its own class because `overloaded` also means infrastructure
 * trouble (the database, the queue), which a batch item's job retries with backoff instead.
 */
export class ModelsBusyError extends AppError {
  constructor(
    /** When the first tier tried expects capacity again. */
    readonly retryAfterMs: number,
  ) {
    super('overloaded', 'Every model is at its rate limit right now; retry after the time in Retry-After.', {
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    });
  }
}
