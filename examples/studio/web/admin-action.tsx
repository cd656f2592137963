import { useState, type ReactNode } from 'react';
import { explain } from './studio-api.ts';

/** What an admin's last action came to: its sentence, and whether it failed. */
export type Message = { text: string; error: boolean } | null;

/** Runs an action, then says what it did (or why not) and refreshes what it changed. */
export function useAction(refresh: () => Promise<unknown>) {
  const [message, setMessage] = useState<Message>(null);
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<string>) => {
    setBusy(true);
    setMessage(null);
    let outcome: { text: string; error: boolean };
    try {
      outcome = { text: await action(), error: false };
    } catch (error) {
      outcome = { text: explain(error), error: true };
    }
    await refresh().catch(() => {});
    setMessage(outcome);
    setBusy(false);
  };
  return { message, busy, run };
}

export function Said({ message }: { message: Message }): ReactNode {
  if (!message) return null;
  return (
    <p className={message.error ? 'admin-message bad' : 'admin-message'} role={message.error ? 'alert' : 'status'}>
      {message.text}
    </p>
  );
}
