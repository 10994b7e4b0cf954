/**
 * `@vuln-triage/sdk`: a typed client of the vulnerability triage service. The types of every
 * path, parameter and answer are generated from the service's own OpenAPI document
 * (`src/generated/openapi.ts`); the helpers cover what one call does not: retries that honour
 * `Retry-After`, paging, streamed uploads with idempotency keys, and waiting for a scan or batch.
 */
export {
  createVulnTriageClient,
  retryingFetch,
  unwrap,
  type ClientOptions,
  type Connection,
  type FetchResult,
  type VulnTriageClient,
} from './client.js';
export {
  describeProblem,
  networkError,
  parseProblem,
  refusal,
  VulnTriageError,
  type Problem,
  type VulnTriageErrorInit,
  type VulnTriageErrorKind,
} from './errors.js';
export type { components, operations, paths } from './generated/openapi.js';
export { fileSha256, idempotencyKeyFor } from './idempotency.js';
export { collectAll, paginate, type Page } from './paginate.js';
export {
  backoffMs,
  DEFAULT_RETRY,
  isRetryable,
  parseRetryAfter,
  withRetries,
  type Attempt,
  type RetryListener,
  type RetryPolicy,
} from './retry.js';
export { uploadScan, type ScanAccepted, type UploadOptions, type UploadQuery } from './upload.js';
export {
  isBatchFinished,
  isScanFinished,
  waitForBatch,
  waitForScan,
  type BatchStatus,
  type ScanStatus,
  type WaitOptions,
} from './wait.js';
