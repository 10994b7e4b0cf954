/**
 * Exit codes of `vuln-triage` (the README's "CLI" section is their contract, so CI scripts can
 * branch on them):
 *   0 ok; 1 the `--fail-on` threshold was met; 2 usage error (bad flags, or a request the
 *   server refused as invalid: 400); 3 a scan failed (a broken or unrecognised file); 4 the
 *   service refused the request (401, 403, 404, 409, 413, …) or could not be reached after
 *   retries.
 */
export const EXIT = {
  ok: 0,
  threshold: 1,
  usage: 2,
  scanFailed: 3,
  service: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

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

/** An error the CLI reports in one message and ends with `exitCode`; never a stack trace. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly problem: Problem | null = null,
  ) {
    super(message);
  }
}

/** A bad flag or argument: exit 2. */
export const usageError = (message: string): CliError => new CliError(message, EXIT.usage);

/**
 * The exit code for a problem the server answered with: the request as made was invalid (2),
 * the file cannot be read as a scan (3), anything else the service refused (4).
 */
export function exitCodeOfProblem(status: number, code: string | undefined): ExitCode {
  if (status === 400) return EXIT.usage;
  if (code === 'unsupported_format' || code === 'unparseable_scan') return EXIT.scanFailed;
  return EXIT.service;
}
