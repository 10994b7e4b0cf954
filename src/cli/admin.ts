import { ConfigError, loadConfig } from '../lib/config.js';
import { createLogger } from '../lib/logger.js';
import { assemble } from '../app/assemble.js';
import type { Services } from '../app/services.js';
import { openDatabaseOnly } from '../app/database.js';
import { describeError } from '../lib/error-text.js';
import { runEnrichCommand } from './enrich-command.js';
import { createKey, inviteOwner, resetPassword, validOwnerEmail } from './people-commands.js';

/**
 * Operator commands (`npm run admin -- <command> ...`), for self-hosters and scripts.
 *   create-workspace --name NAME [--plan free|trial|service] [--owner-email ADDRESS]
 *     prints the workspace id, its first API key (shown once: store it now) and, with
 *     --owner-email, the owner's invitation link (7 days, once; emailed too when SMTP is set).
 *   create-key --workspace ID --label LABEL --scopes a,b
 *     prints a new key of the workspace once (audited with actor `operator`).
 *   reset-password --email ADDRESS
 *     prints a password reset link (30 minutes, once), for when no SMTP server is set.
 *   enrich [--kev FILE|URL] [--epss FILE|URL] [--nvd FILE|URL]
 *     loads enrichment feeds offline (CISA KEV JSON, FIRST EPSS CSV, NVD API 2.0 JSON).
 * Beside a running `npm start` (no DATABASE_URL) both use its embedded PostgreSQL, found through
 * `DATA_DIR/postgres.json`, and its key pepper; with none running they start the embedded one.
 * `enrich` hashes no key, so it never asks for KEY_PEPPER.
 */
const USAGE = [
  'usage: npm run admin -- create-workspace --name NAME [--plan free|trial|service] [--owner-email ADDRESS]',
  '       npm run admin -- create-key --workspace ID --label LABEL --scopes SCOPE[,SCOPE…]',
  '       npm run admin -- reset-password --email ADDRESS',
  '       npm run admin -- enrich [--kev FILE|URL] [--epss FILE|URL] [--nvd FILE|URL]',
].join('\n');

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === 'enrich') return enrich(args);
  if (command === 'create-key') return withServices((services) => createKey(args, services, io));
  if (command === 'reset-password') return withServices((services) => resetPassword(args, services, io));
  if (command !== 'create-workspace') {
    console.error(USAGE);
    return 2;
  }
  const name = flag(args, 'name')?.trim();
  const plan = flag(args, 'plan') ?? 'trial';
  const ownerEmail = flag(args, 'owner-email')?.trim();
  if (
    !name ||
    name.length > 120 ||
    !['free', 'trial', 'service'].includes(plan) ||
    !validOwnerEmail(ownerEmail)
  ) {
    console.error(USAGE);
    return 2;
  }
  return withServices(async (services) => {
    const { workspace, firstKey } = await services.workspaces.createWorkspace({
      name,
      plan: plan as 'free' | 'trial' | 'service',
      actor: { actor: 'operator', ip: null, userAgent: 'admin-cli' },
      reveal: false,
    });
    process.stdout.write(`workspace ${workspace.id}\nplan ${workspace.plan}\napi_key ${firstKey.secret}\n`);
    if (ownerEmail) {
      process.stdout.write(`owner_invitation ${await inviteOwner(services, workspace.id, ownerEmail)}\n`);
    }
    process.stderr.write('The API key is shown once and never stored in clear: keep it now.\n');
    if (ownerEmail) {
      process.stderr.write('The owner opens the invitation link (7 days, once) to choose a password.\n');
    }
    return 0;
  });
}

const io = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
};

/** Runs `run` with the process's services (and the embedded database of a running server). */
async function withServices(run: (services: Services) => Promise<number>): Promise<number> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const { services, close } = await assemble(config, logger, { reuseRunningEmbedded: true });
  try {
    return await run(services);
  } finally {
    await close();
  }
}

async function enrich(args: string[]): Promise<number> {
  const config = loadConfig(process.env, { needsKeyPepper: false });
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const db = await openDatabaseOnly(config, logger);
  try {
    return await runEnrichCommand(args, { db: db.pool, out: (line) => process.stdout.write(`${line}\n`) });
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof ConfigError ? err.message : `admin: ${describeError(err)}`);
    process.exit(1);
  },
);
