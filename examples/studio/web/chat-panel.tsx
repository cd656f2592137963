import type { UIMessage } from 'ai';
import { useEffect, useState } from 'react';
import { Conversation } from './conversation.tsx';
import { ConversationList } from './conversation-list.tsx';
import { conversationId, newConversationId, openConversationId } from './conversation-id.ts';
import { DeskpilotClientError, chatClient, chatSetup, explain, type ChatSetup, type Session } from './studio-api.ts';

type Loaded =
  | { state: 'loading' }
  | {
      state: 'ready';
      setup: ChatSetup;
      chatId: string;
      messages: UIMessage[];
      siblings: Record<string, string[]>;
      stored: boolean;
    }
  | { state: 'failed'; error: unknown };

/** The conversation list beside the open conversation, which is loaded from the chat service's history. */
export function ChatPanel({ session, onSignedOut }: { session: Session; onSignedOut: () => void }) {
  const { email } = session.user;
  const [chat, setChat] = useState(() => conversationId(email, session.projectKey));
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const [version, setVersion] = useState(0);
  const [listOpen, setListOpen] = useState(false);

  useEffect(() => {
    let current = true;
    setLoaded((previous) => (previous.state === 'ready' ? previous : { state: 'loading' }));
    (async () => {
      const setup = await chatSetup();
      // A conversation this page just made has nothing stored: not asked for (a 404 the console would show).
      // One started elsewhere, or not started yet, has no history either: it starts empty.
      const stored = chat.fresh
        ? null
        : await chatClient(setup.chatServiceUrl).chatHistory({ sessionId: chat.id, context: setup.context });
      if (current)
        setLoaded({
          state: 'ready',
          setup,
          chatId: chat.id,
          messages: stored?.messages ?? [],
          siblings: stored?.siblings ?? {},
          stored: stored !== null,
        });
    })().catch((error: unknown) => current && setLoaded({ state: 'failed', error }));
    return () => void (current = false);
  }, [chat, attempt]);

  const startNew = () => {
    setListOpen(false);
    setChat(newConversationId(email, session.projectKey));
  };

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
    <div className="chat-area">
      <ConversationList
        chatServiceUrl={loaded.setup.chatServiceUrl}
        currentId={chat.id}
        version={version}
        open={listOpen}
        onSelect={(id) => {
          setListOpen(false);
          if (id !== chat.id) setChat(openConversationId(email, session.projectKey, id));
        }}
        onNew={startNew}
        onDeleted={(id) => id === chat.id && startNew()}
      />
      {loaded.chatId !== chat.id ? (
        <section className="chat" aria-busy="true">
          <p className="muted center">Loading the conversation…</p>
        </section>
      ) : (
        <Conversation
          key={chat.id}
          chatId={chat.id}
          chatServiceUrl={loaded.setup.chatServiceUrl}
          initialMessages={loaded.messages}
          initialSiblings={loaded.siblings}
          // A stored conversation may have an answer still running (a reload mid-answer): re-attach to it.
          resume={loaded.stored}
          onTurnEnded={() => setVersion((count) => count + 1)}
          onToggleList={() => setListOpen((open) => !open)}
          onSignedOut={onSignedOut}
        />
      )}
    </div>
  );
}
