import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

/** A message a {@link startSmtpSink} server accepted, parsed, with the envelope's recipients. */
export interface DeliveredMail {
  mail: ParsedMail;
  envelopeTo: string[];
}

/** A real SMTP server (`smtp-server`) on a free loopback port, keeping every message it accepts. */
export async function startSmtpSink(options: Partial<SMTPServerOptions> = {}) {
  const delivered: DeliveredMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    ...options,
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (mail) => {
          delivered.push({ mail, envelopeTo: session.envelope.rcptTo.map((to) => to.address) });
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    delivered,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
