import { VulnTriageError, type Problem } from '@vuln-triage/sdk';

export type { Problem } from '@vuln-triage/sdk';

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

/**
 * An error of the SDK as the CLI reports it: spent retries, an unreachable service or a
 * timeout end with 4; an unreadable file is a usage error (2); a refusal, what its problem means.
 */
export function fromSdkError(err: VulnTriageError, prefix = ''): CliError {
  const exitCode =
    err.kind === 'unreadable'
      ? EXIT.usage
      : err.exhausted || err.kind !== 'refused'
        ? EXIT.service
        : exitCodeOfProblem(err.status, err.code);
  return new CliError(`${prefix}${err.message}`, exitCode, err.problem);
}

/** Any error as a {@link CliError} (an unexpected one ends with 4). */
export function toCliError(err: unknown, prefix = ''): CliError {
  if (err instanceof CliError)
    return prefix ? new CliError(`${prefix}${err.message}`, err.exitCode, err.problem) : err;
  if (err instanceof VulnTriageError) return fromSdkError(err, prefix);
  return new CliError(`${prefix}${(err as Error)?.message ?? String(err)}`, EXIT.service);
}
