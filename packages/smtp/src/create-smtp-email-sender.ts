import type { EmailSender } from '@deskpilot/core/session';
import nodemailer from 'nodemailer';

/** Options of {@link createSmtpEmailSender}. */
export interface SmtpEmailSenderOptions {
  /**
   * The SMTP server, as a URL: `smtps://user:password@smtp.example.com:465` (TLS from the start) or
   * `smtp://user:password@smtp.example.com:587` (STARTTLS). Percent-encode a user or password that
   * holds `@`, `:` or `/`.
   */
  url: string;
  /** The sender, e.g. `Deskpilot <no-reply@desk.example.com>`. */
  from: string;
  /**
   * Refuse to send over a connection that did not upgrade to TLS (`smtp://` without STARTTLS): the
   * links in these messages open accounts. Only a server on a loopback address is exempt by default.
   * @default true, false for a loopback host
   */
  requireTls?: boolean;
  /** Longest wait for the connection, the greeting, and each reply. @default 10_000 */
  timeoutMs?: number;
}

/** An {@link EmailSender} over SMTP that can be checked and closed. */
export interface SmtpEmailSender extends EmailSender {
  /** Connects and authenticates, to fail at start-up rather than at the first reset; rejects with the reason. */
  verify(): Promise<void>;
  /** Closes the pooled connections. */
  close(): void;
}

const loopbackHost = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

/**
 * Creates an {@link EmailSender} on nodemailer's SMTP transport: pooled connections, TLS required
 * except on loopback, bounded waits. A message that the server did not accept rejects, with the
 * server's reply in the error (never the message: it holds a link).
 *
 * @example
 * const email = createSmtpEmailSender({ url: process.env.SMTP_URL!, from: 'Deskpilot <no-reply@desk.example.com>' });
 * await email.verify();
 * const sessions = createSessionService({ store, directory, modules: [createRecoveryModule({ tokens, email, links })] });
 */
export function createSmtpEmailSender(options: SmtpEmailSenderOptions): SmtpEmailSender {
  const url = new URL(options.url);
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw new TypeError(`url must be an smtp: or smtps: URL, not ${url.protocol}`);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const transport = nodemailer.createTransport({
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (url.protocol === 'smtps:' ? 465 : 587) : Number(url.port),
    secure: url.protocol === 'smtps:',
    requireTLS: url.protocol === 'smtp:' && (options.requireTls ?? !loopbackHost.test(url.hostname)),
    ...(url.username === ''
      ? {}
      : { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }),
    pool: true,
    maxConnections: 2,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    // The message and the conversation with the server are never logged: a reset link opens an account.
    logger: false,
    debug: false,
  });
  return {
    async send(message) {
      await transport.sendMail({
        from: options.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.html === undefined ? {} : { html: message.html }),
      });
    },
    async verify() {
      await transport.verify();
    },
    close: () => transport.close(),
  };
}
