import { afterEach, describe, expect, it } from 'vitest';
import { createSmtpEmailSender, type SmtpEmailSender } from './create-smtp-email-sender.js';
import { startSmtpSink as startSmtpServer } from '../../../examples/test-support/smtp-sink.ts';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

function sender(port: number, overrides: { url?: string; requireTls?: boolean } = {}): SmtpEmailSender {
  const email = createSmtpEmailSender({
    url: overrides.url ?? `smtp://127.0.0.1:${port}`,
    from: 'Deskpilot <no-reply@desk.example.com>',
    timeoutMs: 5_000,
    ...(overrides.requireTls === undefined ? {} : { requireTls: overrides.requireTls }),
  });
  cleanup.push(() => email.close());
  return email;
}

const link = `https://desk.example.com/reset-password#token=${'A'.repeat(43)}`;

describe('createSmtpEmailSender', () => {
  it('delivers the message to a real SMTP server, the long link intact', async () => {
    const server = await startSmtpServer();
    cleanup.push(server.close);
    await sender(server.port).send({
      to: 'rep@example.com',
      subject: 'Reset your Deskpilot password',
      text: `Open this link:\n\n${link}\n`,
    });
    expect(server.delivered).toHaveLength(1);
    const [{ mail, envelopeTo }] = server.delivered as [(typeof server.delivered)[number]];
    expect(envelopeTo).toEqual(['rep@example.com']);
    expect(mail.from?.value).toEqual([{ name: 'Deskpilot', address: 'no-reply@desk.example.com' }]);
    expect(mail.subject).toBe('Reset your Deskpilot password');
    expect(mail.text).toContain(link);
  });

  it('signs in with the user and password of the URL, percent-decoded', async () => {
    const logins: Array<{ username?: string | null; password?: string | null }> = [];
    const server = await startSmtpServer({
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        logins.push({ username: auth.username, password: auth.password });
        if (auth.username === 'mailer' && auth.password === 'p@ss:w/rd') callback(null, { user: 'mailer' });
        else callback(new Error('Invalid username or password'));
      },
    });
    cleanup.push(server.close);
    const url = `smtp://mailer:${encodeURIComponent('p@ss:w/rd')}@127.0.0.1:${server.port}`;
    await sender(server.port, { url }).verify();
    await sender(server.port, { url }).send({ to: 'rep@example.com', subject: 'Hi', text: 'Hello' });
    expect(server.delivered).toHaveLength(1);
    expect(logins[0]).toEqual({ username: 'mailer', password: 'p@ss:w/rd' });

    const wrong = sender(server.port, { url: `smtp://mailer:nope@127.0.0.1:${server.port}` });
    await expect(wrong.verify()).rejects.toThrow(/Invalid username or password/);
    await expect(wrong.send({ to: 'rep@example.com', subject: 'Hi', text: 'Hello' })).rejects.toThrow();
    expect(server.delivered).toHaveLength(1);
  });

  it("rejects a message the server refuses, with the server's reply and without the message", async () => {
    const server = await startSmtpServer({
      onRcptTo(address, _session, callback) {
        callback(address.address === 'gone@example.com' ? new Error('No such mailbox') : undefined);
      },
    });
    cleanup.push(server.close);
    const refused = sender(server.port).send({ to: 'gone@example.com', subject: 'Reset', text: link });
    await expect(refused).rejects.toThrow(/No such mailbox/);
    const error = await refused.catch((reason: unknown) => reason);
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(link);
    expect(server.delivered).toHaveLength(0);
  });

  it('refuses to send in the clear when TLS is required and the server offers no STARTTLS', async () => {
    const server = await startSmtpServer();
    cleanup.push(server.close);
    await expect(
      sender(server.port, { requireTls: true }).send({ to: 'rep@example.com', subject: 'Reset', text: link }),
    ).rejects.toThrow();
    expect(server.delivered).toHaveLength(0);
  });

  it('rejects a URL that is not SMTP, and fails within its timeout when nothing answers', async () => {
    expect(() => createSmtpEmailSender({ url: 'https://mail.example.com', from: 'a@example.com' })).toThrow(
      /smtp: or smtps:/,
    );
    const server = await startSmtpServer();
    await server.close();
    await expect(sender(server.port).verify()).rejects.toThrow();
  });
});
