import { useChat } from '@ai-sdk/react';
import { isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';
import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { conversationId, newConversationId } from './conversation-id.ts';
import { MessageView } from './message-view.tsx';
import { DeskpilotClientError, chatClient, chatSetup, explain, type ChatSetup, type Session } from './studio-api.ts';

type Loaded =
  | { state: 'loading' }
  | { state: 'ready'; setup: ChatSetup; messages: UIMessage[] }
  | { state: 'failed'; error: unknown };

const suggestions = [
  'Show order ORD-1001',
  'Refund order ORD-1001',
  'Cancel order ORD-1002',
  'Find running shoes',
  'Create a ticket about a late delivery for ORD-1003',
];

/** Loads where the chat service is and the stored conversation, then shows it. */
export function ChatPanel({ session, onSignedOut }: { session: Session; onSignedOut: () => void }) {
  const [chat, setChat] = useState(() => conversationId(session.user.email, session.projectKey));
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let current = true;
    setLoaded({ state: 'loading' });
    (async () => {
      const setup = await chatSetup();
      // A conversation this page just made has nothing stored: not asked for (a 404 the console would show).
      // One started elsewhere, or not started yet, has no history either: it starts empty.
      const stored = chat.fresh
        ? null
        : await chatClient(setup.chatServiceUrl).chatHistory({ sessionId: chat.id, context: setup.context });
      const messages = stored?.messages ?? [];
      if (current) setLoaded({ state: 'ready', setup, messages });
    })().catch((error: unknown) => current && setLoaded({ state: 'failed', error }));
    return () => void (current = false);
  }, [chat, attempt]);

  if (loaded.state === 'loading')
    return (
      <section className="chat" aria-busy="true">
        <p className="muted center">Loading the conversation…</p>
      </section>
    );
  if (loaded.state === 'failed') {
    const ended = DeskpilotClientError.isInstance(loaded.error, 'unauthenticated');
    return (
      <section className="chat">
        <div className="panel problem" role="alert">
          <p>{explain(loaded.error)}</p>
          <button
            type="button"
            className="primary"
            onClick={ended ? onSignedOut : () => setAttempt((count) => count + 1)}
          >
            {ended ? 'Sign in' : 'Retry'}
          </button>
        </div>
      </section>
    );
  }
  return (
    <Conversation
      key={chat.id}
      chatId={chat.id}
      chatServiceUrl={loaded.setup.chatServiceUrl}
      initialMessages={loaded.messages}
      onNewConversation={() => setChat(newConversationId(session.user.email, session.projectKey))}
      onSignedOut={onSignedOut}
    />
  );
}

interface ConversationProps {
  chatId: string;
  chatServiceUrl: string;
  initialMessages: UIMessage[];
  onNewConversation: () => void;
  onSignedOut: () => void;
}

function Conversation({ chatId, chatServiceUrl, initialMessages, onNewConversation, onSignedOut }: ConversationProps) {
  const transport = useMemo(
    () =>
      // The client's transport sends only the new message (or the answered approval) and a context
      // fetched for each request, so the role and a signed grant are always current; problems and
      // network failures reach `error` as DeskpilotClientErrors the page can explain.
      chatClient(chatServiceUrl).chatTransport<UIMessage>({
        context: async () => ({ ...(await chatSetup()).context, pageContext: { page: 'studio' } }),
      }),
    [chatServiceUrl],
  );
  const { messages, sendMessage, regenerate, addToolApprovalResponse, status, error, clearError, stop } = useChat({
    id: chatId,
    messages: initialMessages,
    transport,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [draft, setDraft] = useState('');
  const bottom = useRef<HTMLDivElement>(null);
  const busy = status === 'submitted' || status === 'streaming';

  useEffect(() => {
    // A block body: browsers now return a promise from scrollIntoView, and an effect may only return a cleanup.
    bottom.current?.scrollIntoView({ block: 'end' });
  }, [messages, status]);

  const send = useCallback(
    (text: string) => {
      const trimmed = text.trim();
      if (!trimmed || busy) return;
      clearError();
      setDraft('');
      void sendMessage({ text: trimmed });
    },
    [busy, clearError, sendMessage],
  );
  // After a failed request, send the same thing again: an answered approval as it stands (regenerating
  // would drop the answer and ask the model anew), otherwise the last user message.
  const retry = () => {
    clearError();
    const last = messages.at(-1);
    const answeredApproval =
      last?.role === 'assistant' &&
      last.parts.some((part) => isToolUIPart(part) && part.state === 'approval-responded');
    void (answeredApproval ? sendMessage() : regenerate());
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    send(draft);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send(draft);
    }
  };
  const ended = DeskpilotClientError.isInstance(error, 'unauthenticated');

  return (
    <section className="chat" aria-label="Assistant">
      <div className="chat-header">
        <h2>Assistant</h2>
        <button type="button" className="quiet" onClick={onNewConversation} disabled={busy}>
          New conversation
        </button>
      </div>
      <div className="messages" role="log" aria-live="polite">
        {messages.length === 0 && (
          <div className="empty">
            <p>Ask about orders, customers, products or tickets. Writes such as refunds wait for your approval.</p>
            <div className="suggestions">
              {suggestions.map((suggestion) => (
                <button type="button" key={suggestion} className="chip" onClick={() => send(suggestion)}>
                  {suggestion}
                </button>
              ))}
            </div>
          </div>
        )}
        {messages.map((message) => (
          <MessageView
            key={message.id}
            message={message}
            disabled={busy}
            onApproval={(id, approved) => void addToolApprovalResponse({ id, approved })}
          />
        ))}
        {status === 'submitted' && (
          <p className="muted typing" role="status">
            Assistant is thinking…
          </p>
        )}
        {error && (
          <div className="banner" role="alert">
            <span>{explain(error)}</span>
            {ended ? (
              <button type="button" onClick={onSignedOut}>
                Sign in
              </button>
            ) : (
              <button type="button" onClick={retry}>
                Retry
              </button>
            )}
          </div>
        )}
        <div ref={bottom} />
      </div>
      <form className="composer" onSubmit={submit}>
        <textarea
          aria-label="Message"
          placeholder="Message the assistant — Enter to send, Shift+Enter for a new line"
          rows={2}
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={onKeyDown}
          autoFocus
        />
        {busy ? (
          <button type="button" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button type="submit" className="primary" disabled={!draft.trim()}>
            Send
          </button>
        )}
      </form>
    </section>
  );
}
