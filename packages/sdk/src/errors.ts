/** An RFC 9457 problem document as the service answers it (docs/api.md#errors). */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  code?: string;
  detail?: string;
  requestId?: string;
  errors?: { path?: string; message?: string }[];
}

/**
 * What went wrong: the service `refused` (a problem document), could not be reached
 * (`unreachable`), the upload's source could not be read (`unreadable`), or a wait ran out (`timeout`).
 */
export type VulnTriageErrorKind = 'refused' | 'unreachable' | 'unreadable' | 'timeout';

/** What a {@link VulnTriageError} carries besides its message. */
export interface VulnTriageErrorInit {
  /** @defaultValue `refused` with a status, else `unreachable` */
  kind?: VulnTriageErrorKind;
  /** The HTTP status the service answered, or 0 when it could not be reached. */
  status: number;
  problem?: Problem | null;
  /** True when the call was retried until the retry policy gave up (or refused a long `Retry-After`). */
  exhausted?: boolean;
  cause?: unknown;
}

/**
 * The one error the SDK throws: a refusal of the service (its problem document attached), a
 * network failure (`status` 0), or either of those after the retries were spent (`exhausted`).
 */
export class VulnTriageError extends Error {
  override readonly name = 'VulnTriageError';
  readonly kind: VulnTriageErrorKind;
  readonly status: number;
  readonly problem: Problem | null;
  readonly exhausted: boolean;

  constructor(message: string, init: VulnTriageErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind ?? (init.status > 0 ? 'refused' : 'unreachable');
    this.status = init.status;
    this.problem = init.problem ?? null;
    this.exhausted = init.exhausted ?? false;
  }

  /** The problem's stable `code` (docs/api.md#errors), when the service sent one. */
  get code(): string | undefined {
    return this.problem?.code;
  }
}

/** The problem document of a refused answer, or null when the body is not one (a proxy's HTML page). */
export function parseProblem(text: string): Problem | null {
  try {
    const doc = JSON.parse(text) as unknown;
    return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Problem) : null;
  } catch {
    return null;
  }
}

/** A problem as lines a person reads: its detail with status and code, each `errors[]` path, the request id. */
export function describeProblem(status: number, problem: Problem | null, fallback: string): string {
  const head = problem?.detail ?? problem?.title ?? fallback;
  const code = problem?.code ? ` [${status} ${problem.code}]` : ` [${status}]`;
  const lines = [`${head}${code}`];
  for (const e of problem?.errors ?? []) lines.push(`  ${e.path ?? '/'}: ${e.message ?? 'is invalid'}`);
  if (problem?.requestId) lines.push(`  request id: ${problem.requestId}`);
  return lines.join('\n');
}

/** The error a refused answer becomes. */
export function refusal(status: number, statusText: string, body: string): VulnTriageError {
  const problem = parseProblem(body);
  return new VulnTriageError(describeProblem(status, problem, `HTTP ${status} ${statusText}`.trim()), {
    status,
    problem,
  });
}

/** A network failure (refused, reset, DNS, TLS) naming its cause. */
export function networkError(url: URL, err: unknown): VulnTriageError {
  // fetch wraps the socket's error in `cause`; node:http hands it over as it is.
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } } | null;
  const reason = e?.cause?.code ?? e?.code ?? e?.cause?.message ?? e?.message ?? String(err);
  return new VulnTriageError(`Could not reach ${url.origin}: ${reason}`, { status: 0, cause: err });
}
