import { isScope } from '../domain/keys/scopes.js';
import { isUuid } from '../lib/ids.js';
import type { Services } from '../app/services.js';

/**
 * The admin CLI's commands about people and keys (docs/operations.md#people-and-keys-from-the-command-line):
 * an owner invitation for a workspace made from the CLI, a password reset link printed instead
 * of emailed, and a key for a workspace, each printed once. The operator acts as `operator`.
 */
const OPERATOR = { actor: 'operator', ip: null, userAgent: 'admin-cli' };

export interface CommandIo {
  out(line: string): void;
  err(line: string): void;
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The owner invitation of a new workspace; returns its link. */
export async function inviteOwner(
  services: Pick<Services, 'invitations'>,
  workspaceId: string,
  email: string,
): Promise<string> {
  const inv = await services.invitations.create({
    workspaceId,
    email,
    role: 'owner',
    by: 'operator',
    actor: OPERATOR,
  });
  return inv.invitationUrl;
}

export function validOwnerEmail(email: string | undefined): boolean {
  return email === undefined || (EMAIL.test(email) && email.length <= 254);
}

/** `reset-password --email ADDRESS`: prints a reset link (30 minutes, once). */
export async function resetPassword(
  args: string[],
  services: Pick<Services, 'passwordResets'>,
  io: CommandIo,
): Promise<number> {
  const email = flag(args, 'email')?.trim();
  if (!email || !EMAIL.test(email)) {
    io.err('usage: npm run admin -- reset-password --email ADDRESS');
    return 2;
  }
  const url = await services.passwordResets.issueLink(email);
  if (!url) {
    io.err(`No console user has the email ${email}.`);
    return 1;
  }
  io.out(`reset_url ${url}`);
  io.err('The link works once, for 30 minutes, and ends every session of the account when used.');
  return 0;
}

/** `create-key --workspace ID --label LABEL --scopes a,b`: prints the new key once. */
export async function createKey(
  args: string[],
  services: Pick<Services, 'keys' | 'workspaces'>,
  io: CommandIo,
): Promise<number> {
  const workspaceId = flag(args, 'workspace') ?? '';
  const label = flag(args, 'label')?.trim() ?? '';
  const scopes = (flag(args, 'scopes') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = scopes.filter((s) => !isScope(s));
  if (!isUuid(workspaceId) || !label || label.length > 100 || scopes.length === 0 || bad.length > 0) {
    io.err('usage: npm run admin -- create-key --workspace ID --label LABEL --scopes SCOPE[,SCOPE…]');
    if (bad.length > 0) io.err(`unknown scope: ${bad.join(', ')}`);
    return 2;
  }
  try {
    await services.workspaces.workspaceOf(workspaceId);
  } catch {
    io.err(`No workspace ${workspaceId}.`);
    return 1;
  }
  const key = await services.keys.createKey({
    workspaceId,
    label,
    scopes,
    expiresAt: null,
    actor: OPERATOR,
    reveal: false,
  });
  io.out(`key_id ${key.key.id}\napi_key ${key.secret}`);
  io.err('The API key is shown once and never stored in clear: keep it now.');
  return 0;
}
