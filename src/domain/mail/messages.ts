import type { MailMessage } from '../../lib/mailer.js';

/**
 * The emails the service sends (docs/console.md#invitations, docs/console.md#password-reset).
 * Each carries its one-time link and nothing else secret: no key, no password, no session.
 * Names people chose (workspace, inviter) are written as plain text, and line breaks in them are
 * flattened so they cannot start lines of their own.
 */

function oneLine(text: string): string {
  return text.replace(/[\r\n\u2028\u2029]+/g, ' ').trim();
}

export function invitationMessage(input: {
  to: string;
  workspaceName: string;
  invitedBy: string;
  role: string;
  url: string;
  expiresAt: Date;
}): MailMessage {
  const workspace = oneLine(input.workspaceName);
  return {
    to: input.to,
    subject: `You are invited to ${workspace} on VulnTriage`,
    text: [
      `${oneLine(input.invitedBy)} invites you to join the workspace "${workspace}" as ${input.role}.`,
      '',
      'Accept the invitation here (the link works once):',
      input.url,
      '',
      `It expires on ${input.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
      'If you did not expect it, ignore this email.',
    ].join('\n'),
  };
}

export function passwordResetMessage(input: { to: string; url: string; validMinutes: number }): MailMessage {
  return {
    to: input.to,
    subject: 'Reset your VulnTriage password',
    text: [
      'Someone asked to reset the password of this account.',
      '',
      `Choose a new password here (the link works once, for ${input.validMinutes} minutes):`,
      input.url,
      '',
      'Setting a new password signs the account out everywhere.',
      'If you did not ask, ignore this email: your password stays as it is.',
    ].join('\n'),
  };
}
