import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';

/** One plain-text email. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * Outgoing email (docs/configuration.md#email): one SMTP transport per process, built once from
 * SMTP_URL with MAIL_FROM as the sender, closed on shutdown.
 */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** Timeouts short enough that a dead SMTP server never holds a request or a CLI run for long. */
const SMTP_TIMEOUTS_MS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

export function createMailer(mail: { smtpUrl: string; from: string }): Mailer {
  const options: SMTPTransport.Options = { url: mail.smtpUrl, ...SMTP_TIMEOUTS_MS };
  const transport = nodemailer.createTransport(options);
  return {
    async send(message) {
      await transport.sendMail({
        from: mail.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
      });
    },
    close() {
      transport.close();
    },
  };
}
