import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

/** One message as the SMTP server received it: the envelope, the headers, and the body decoded. */
export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  raw: string;
  text: string;
}

/** Quoted-printable (RFC 2045) as nodemailer writes long lines: soft breaks and `=XX` bytes. */
function decodeQuotedPrintable(body: string): string {
  const bytes = body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`) of a header, decoded. */
function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?([QB])\?([^?]*)\?=/gi, (_m, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeQuotedPrintable(text.replace(/_/g, ' ')),
    );
}

function parse(raw: string, from: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const text =
    encoding === 'quoted-printable'
      ? decodeQuotedPrintable(body)
      : encoding === 'base64'
        ? Buffer.from(body, 'base64').toString('utf8')
        : body;
  return { from, to, subject: decodeHeader(header('Subject')), raw, text: text.replace(/\r\n/g, '\n') };
}

/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package), keeping every message it is
 * sent. No TLS and no login, as a relay inside a private network would be.
 */
export async function startSmtpServer(): Promise<{
  url: string;
  messages: ReceivedMail[];
  /** Resolves with message number `index` (from 0) to `address`, received already or later. */
  next(address: string, index?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}> {
  const messages: ReceivedMail[] = [];
  const waiting: { address: string; index: number; resolve: (m: ReceivedMail) => void }[] = [];
  const to = (address: string) => messages.filter((m) => m.to.includes(address));
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const envelope = session.envelope;
        const mail = parse(
          Buffer.concat(chunks).toString('utf8'),
          envelope.mailFrom ? envelope.mailFrom.address : '',
          envelope.rcptTo.map((r) => r.address),
        );
        messages.push(mail);
        for (const w of [...waiting]) {
          if (mail.to.includes(w.address) && to(w.address).length > w.index) {
            waiting.splice(waiting.indexOf(w), 1);
            w.resolve(mail);
          }
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    next(address, index = 0) {
      const had = to(address)[index];
      if (had) return Promise.resolve(had);
      return new Promise((resolve) => waiting.push({ address, index, resolve }));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
