import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { casesList } from './commands/cases.js';
import { EXPORT_FORMATS, exportCases } from './commands/export.js';
import { scanUpload } from './commands/scan-upload.js';
import { triage } from './commands/triage.js';
import { usage } from './commands/usage.js';
import { makeContext, type GlobalOptions } from './context.js';
import { EXIT, toCliError, type ExitCode } from './errors.js';
import { THRESHOLDS } from './fail-on.js';
import { collect, type FilterOptions } from './filters.js';
import { colourEnabled, makeStyle } from './output.js';

/**
 * `vuln-triage`: the command-line client of the service's HTTP API (docs/cli.md), on the SDK
 * (`@vuln-triage/sdk`). A package of its own that imports nothing of the server, so it installs
 * without the server's dependencies and runs against any deployment of the API.
 */

/** The package's version: its package.json sits one folder up from `src/` and from `dist/`. */
function packageVersion(): string {
  try {
    const manifest = new URL('../package.json', import.meta.url);
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/**
 * The formats `scan upload --format` offers. The client stays free of the server's modules, so
 * it keeps its own list; a test checks it equals the server's registry of formats.
 */
export const SCAN_FORMATS = ['nessus', 'qualys', 'openvas', 'sarif', 'cyclonedx', 'cli'];

function addFilters(cmd: Command): Command {
  return cmd
    .option('--severity <list>', 'CRITICAL,HIGH,MEDIUM,LOW,INFO (comma-separated)')
    .option('--status <list>', 'open,in_progress,resolved,risk_accepted,false_positive')
    .option('--cve <id>', 'a CVE id')
    .option('--asset <name>', 'asset name, host, IP, FQDN or component')
    .option('--scan <id>', 'cases sighted in this scan')
    .option('--kev <bool>', 'true: only CVEs in CISA KEV; false: none')
    .option('--filter <key=value>', 'any other list filter the server knows (repeatable)', collect);
}

/** Builds the program; `run` is told each command's exit code. */
export function buildProgram(
  run: (work: (ctx: ReturnType<typeof makeContext>) => Promise<ExitCode>, cmd: Command) => Promise<void>,
): Command {
  const program = new Command('vuln-triage')
    .description('Upload scans, triage findings and read cases from the vulnerability triage service.')
    .version(packageVersion())
    .option('--url <url>', 'service address (default: $VULN_TRIAGE_URL)')
    .option('--api-key <key>', 'API key (default: $VULN_TRIAGE_API_KEY)')
    .option('--retries <n>', 'retries after 429, 503 or a network error (default 4, or $VULN_TRIAGE_RETRIES)')
    .option('--json', 'machine-readable output on stdout, no progress bars')
    .option('-q, --quiet', 'no progress bars, notes or summaries: errors and the exit code only')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  const scan = program.command('scan').description('scan files');
  scan
    .command('upload')
    .description('upload scan files; with --wait, follow the parse and summarise it')
    .argument('<files...>', 'scan files (Nessus, Qualys, OpenVAS, SARIF, CycloneDX, CLI findings JSON/JSONL)')
    .addOption(
      new Option('--format <format>', 'force the format instead of detecting it').choices(SCAN_FORMATS),
    )
    .option('--name <name>', 'scan name (default: the file name)')
    .option('--asset <name>', 'what the upload is about (attributes host-less findings to it)')
    .addOption(
      new Option('--environment <env>', 'asset environment').choices([
        'PRODUCTION',
        'STAGING',
        'DEVELOPMENT',
        'TEST',
      ]),
    )
    .addOption(
      new Option('--criticality <level>', 'asset criticality').choices(['CRITICAL', 'HIGH', 'MEDIUM', 'LOW']),
    )
    .option('--internet-exposed', 'the asset is reachable from the internet')
    .option('--no-resolve-missing', "do not resolve the cases of the scan's scope it no longer sees")
    .addOption(
      new Option('--triage <mode>', 'triage cases after parsing (server feature)').choices([
        'none',
        'new',
        'all',
      ]),
    )
    .option('--wait', 'wait for the parse, with a progress bar, and print a summary')
    .addOption(
      new Option(
        '--fail-on <severity>',
        'exit 1 when the scan created cases at or above this severity (implies --wait)',
      ).choices([...THRESHOLDS]),
    )
    .addOption(
      new Option(
        '--fail-on-priority <priority>',
        'exit 1 when the scan created cases triaged at or above this priority (implies --wait; pair with --triage)',
      ).choices([...THRESHOLDS]),
    )
    .option(
      '--fail-on-all',
      'with --fail-on or --fail-on-priority: count every open case the scan sighted, not only new ones',
    )
    .option('--sarif-out <file>', "write the scan's open cases as SARIF 2.1.0 (implies --wait; one file)")
    .option('--gzip', 'compress on the fly (Content-Encoding: gzip)')
    .option('--idempotency-key <key>', 'override the key derived from the file SHA-256 and options')
    .option('--timeout <seconds>', 'stop waiting after this long (exit 4)', '3600')
    .addOption(new Option('--poll-interval <ms>', 'between status polls').default('1000').hideHelp())
    .action((files: string[], _o, cmd: Command) => run((ctx) => scanUpload(ctx, files, cmd.opts()), cmd));

  program
    .command('triage')
    .description('triage one finding (POST /api/v1/triage)')
    .option('--cve <id>', 'CVE id (repeatable, or comma-separated)', collect)
    .option('--title <title>', 'finding title')
    .option('--severity <severity>', 'CRITICAL, HIGH, MEDIUM, LOW or INFO')
    .option('--description <text>', 'finding description')
    .option('--cvss <score>', 'CVSS base score 0-10')
    .option('--cvss-vector <vector>', 'CVSS vector')
    .option('--file <file>', 'the request body as JSON (- for stdin)')
    .action((_o, cmd: Command) => run((ctx) => triage(ctx, cmd.opts()), cmd));

  const cases = program.command('cases').description('cases (deduplicated findings)');
  addFilters(
    cases
      .command('list')
      .description('list cases (GET /api/v1/cases)')
      .option('--limit <n>', 'page size, 1-200 (default 50)')
      .option('--cursor <cursor>', 'page after this cursor')
      .option('--all', 'follow every page'),
  ).action((_o, cmd: Command) => run((ctx) => casesList(ctx, cmd.opts()), cmd));

  program
    .command('usage')
    .description("this key's usage and the workspace's AI calls left this month")
    .option('--from <date>', 'first UTC day, YYYY-MM-DD (default: this month)')
    .option('--to <date>', 'last UTC day, YYYY-MM-DD')
    .action((_o, cmd: Command) => run((ctx) => usage(ctx, cmd.opts()), cmd));

  const exp = program.command('export').description('exports');
  addFilters(
    exp
      .command('cases')
      .description('export cases (GET /api/v1/exports/cases)')
      .addOption(
        new Option('--format <format>', 'export format').choices(EXPORT_FORMATS).makeOptionMandatory(),
      )
      .option('-o, --output <file>', 'write to FILE (default: stdout)'),
  ).action((_o, cmd: Command) =>
    run((ctx) => exportCases(ctx, cmd.opts<FilterOptions & { format?: string }>()), cmd),
  );

  return program;
}

/** Runs the CLI over `argv` (process.argv shape) and answers the exit code. */
export async function main(argv: string[]): Promise<ExitCode> {
  let exit: ExitCode = EXIT.ok;
  const errStyle = makeStyle(colourEnabled(process.stderr));
  const fail = (err: unknown): ExitCode => {
    const error = toCliError(err);
    process.stderr.write(`${errStyle.red('error:')} ${error.message}\n`);
    return error.exitCode;
  };
  const program = buildProgram(async (work, cmd) => {
    try {
      exit = await work(makeContext(cmd.optsWithGlobals<GlobalOptions>()));
    } catch (err) {
      exit = fail(err);
    }
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and --version end 0; every other parse error is a usage error (2), already printed.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    return fail(err);
  }
  return exit;
}
