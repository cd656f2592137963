/** One email to send: plain text always, HTML when the sender has it. */
export interface EmailMessage {
  /** One address, normalised. */
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/**
 * Port for sending email (password reset and verification links). It resolves once the message is
 * handed to the mail system and rejects when it was not: core reports the failure and never tells the
 * requester, who gets the same answer either way. `@deskpilot/smtp` has an SMTP adapter.
 */
export interface EmailSender {
  send(message: EmailMessage): Promise<void>;
}

/** Options of {@link createConsoleEmailSender}. */
export interface ConsoleEmailSenderOptions {
  /** Where each message goes, as text. @default a write to standard error (`console.error`) */
  write?: (text: string) => void;
}

/**
 * An {@link EmailSender} for development that prints each message, links included, instead of sending
 * it. A link in a reset message opens the account: never use it where others read the output.
 *
 * @example
 * const email = createConsoleEmailSender(); // prints "To: alice@example.com … https://…/reset#token=…"
 */
export function createConsoleEmailSender(options: ConsoleEmailSenderOptions = {}): EmailSender {
  // eslint-disable-next-line no-console
  const write = options.write ?? ((text: string) => console.error(text));
  return {
    async send(message) {
      write(
        `--- email (not sent: development sender) ---\nTo: ${message.to}\nSubject: ${message.subject}\n\n${message.text}\n---`,
      );
    },
  };
}
