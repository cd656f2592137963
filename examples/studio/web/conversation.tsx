import { useChat } from '@ai-sdk/react';
import { isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses, type FileUIPart, type UIMessage } from 'ai';
import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { MessageView, type MessageBranching } from './message-view.tsx';
import { DeskpilotClientError, chatClient, chatSetup, explain, type ChatSetup } from './studio-api.ts';

const suggestions = [
  'Show order ORD-1001',
  'Refund order ORD-1001',
  'Cancel order ORD-1002',
  'Find running shoes',
  'Create a ticket about a late delivery for ORD-1003',
];

/** What a message may carry: the chat service's default file policy. */
const attachable = 'image/png,image/jpeg,image/gif,image/webp,application/pdf';

/** Files as the file parts a message carries (data URLs), read before the input is cleared. */
function toFileParts(files: readonly File[]): Promise<FileUIPart[]> {
  return Promise.all(
    files.map(
      (file) =>
        new Promise<FileUIPart>((resolve, reject) => {
          const reader = new FileReader();
          reader.onload = () =>
            resolve({ type: 'file', mediaType: file.type, filename: file.name, url: String(reader.result) });
          reader.onerror = () => reject(reader.error ?? new Error(`${file.name} could not be read`));
          reader.readAsDataURL(file);
        }),
    ),
  );
}

/** A read of the conversation's history (as it is, or with another branch shown). */
type HistoryRequest = (
  client: ReturnType<typeof chatClient>,
  context: ChatSetup['context'],
) => Promise<{ messages: UIMessage[]; siblings: Record<string, string[]> } | null>;

interface ConversationProps {
  chatId: string;
  chatServiceUrl: string;
  initialMessages: UIMessage[];
  /** The other versions of the messages shown (the history's `siblings`). */
  initialSiblings: Record<string, string[]>;
  /** Re-attach to an answer still running (the conversation is stored: a reload may have cut one). */
  resume: boolean;
  onTurnEnded: () => void;
  onToggleList: () => void;
  onSignedOut: () => void;
}

/** One conversation: its messages, approval cards, and the composer (text and attachments). */
export function Conversation(props: ConversationProps) {
  const { chatId, chatServiceUrl, initialMessages } = props;
  // The step-up proofs of approved cards, by approval id, until the answer that carries them ends.
  const stepUpProofs = useRef<Record<string, string>>({});
  const transport = useMemo(
    () =>
      // The client's transport sends only the new message (or the answered approval) and a context
      // fetched for each request, so the role and a signed grant are always current; problems and
      // network failures reach `error` as DeskpilotClientErrors the page can explain.
      chatClient(chatServiceUrl).chatTransport<UIMessage>({
        context: async () => ({ ...(await chatSetup()).context, pageContext: { page: 'studio' } }),
        stepUp: () => stepUpProofs.current,
      }),
    [chatServiceUrl],
  );
  const [siblings, setSiblings] = useState(props.initialSiblings);
  const [branchError, setBranchError] = useState<unknown>(null);
  // After an edit or a regeneration the server holds a new branch (an edited question under a new id):
  // the history, read again once the answer has ended, shows its ids and the versions' arrows.
  const branched = useRef(false);
  // What Retry repeats after a failed edit or regeneration (null: the last message, or an approval answer).
  const lastAction = useRef<(() => Promise<void>) | null>(null);
  // Each read of the history, and each message sent, takes a number: a read that returns after a newer
  // one (or after a message was sent) is not shown.
  const reads = useRef(0);
  const showHistory = useRef<(ask: HistoryRequest, report?: boolean) => Promise<void>>(async () => {});
  const { messages, setMessages, sendMessage, regenerate, addToolApprovalResponse, status, error, clearError, stop } =
    useChat({
      id: chatId,
      messages: initialMessages,
      transport,
      resume: props.resume,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onFinish: ({ message, isError }) => {
        stepUpProofs.current = {};
        props.onTurnEnded();
        if (!branched.current) return;
        branched.current = false;
        // A request refused before its answer began stored nothing: Retry sends it again. Once an answer
        // began, the edit or the new branch is stored, so Retry asks for another answer instead.
        if (!isError) lastAction.current = null;
        else if (message.parts.length > 0) lastAction.current = () => regenerateLatest.current();
        // Either way the page shows what the server keeps: its ids, and the versions' arrows.
        // Not reported when it fails: the turn's own error says what went wrong.
        void showHistory.current((client, context) => client.chatHistory({ sessionId: chatId, context }), false);
      },
    });
  const regenerateLatest = useRef(() => regenerate());
  regenerateLatest.current = () => regenerate();
  showHistory.current = async (ask, report = true) => {
    const read = ++reads.current;
    try {
      const history = await ask(chatClient(chatServiceUrl), (await chatSetup()).context);
      if (!history || read !== reads.current) return;
      setMessages(history.messages);
      setSiblings(history.siblings);
      setBranchError(null);
    } catch (failure) {
      if (report && read === reads.current) setBranchError(failure);
    }
  };
  const [draft, setDraft] = useState('');
  const [files, setFiles] = useState<File[]>([]);
  const fileInput = useRef<HTMLInputElement>(null);
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
      setBranchError(null);
      reads.current++;
      lastAction.current = null;
      branched.current = false;
      setDraft('');
      const attached = files;
      setFiles([]);
      if (fileInput.current) fileInput.current.value = '';
      void (async () => {
        const parts = await toFileParts(attached);
        await sendMessage({ text: trimmed, ...(parts.length > 0 ? { files: parts } : {}) });
      })();
    },
    [busy, clearError, sendMessage, files],
  );
  // After a failed request, send the same thing again: an answered approval as it stands (regenerating
  // would drop the answer and ask the model anew), otherwise the last user message.
  const retry = () => {
    clearError();
    setBranchError(null);
    reads.current++;
    branched.current = true;
    if (lastAction.current) return void lastAction.current();
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
  /** An edit or a regeneration: a new branch, shown once its answer ends; Retry runs `again`. */
  const act = (action: () => Promise<void>, again = action) => {
    clearError();
    setBranchError(null);
    reads.current++;
    branched.current = true;
    lastAction.current = again;
    void action();
  };
  const branchingOf = (message: UIMessage): MessageBranching => ({
    // Own keys only: a message id is the client's choice ("constructor" included).
    siblings: Object.hasOwn(siblings, message.id) ? siblings[message.id] : undefined,
    onEdit: (text) => {
      const files = message.parts.filter((part): part is FileUIPart => part.type === 'file');
      act(() => sendMessage({ text, messageId: message.id, ...(files.length > 0 ? { files } : {}) }));
    },
    // Once asked, the answer is gone from the page: a retry asks again for its question's last answer.
    onRegenerate: () =>
      act(
        () => regenerate({ messageId: message.id }),
        () => regenerate(),
      ),
    onSwitch: (messageId) =>
      void showHistory.current((client, context) => client.selectBranch({ sessionId: chatId, messageId, context })),
  });

  return (
    <section className="chat" aria-label="Assistant">
      <div className="chat-header">
        <button type="button" className="quiet list-toggle" onClick={props.onToggleList}>
          Conversations
        </button>
        <h2>Assistant</h2>
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
            onApproval={(id, approved, proof) => {
              reads.current++;
              // Sent with the request that carries the answer (the transport reads them), then dropped.
              if (proof) stepUpProofs.current[id] = proof;
              void addToolApprovalResponse({ id, approved });
            }}
            branching={branchingOf(message)}
          />
        ))}
        {status === 'submitted' && (
          <p className="muted typing" role="status">
            Assistant is thinking…
          </p>
        )}
        {branchError !== null && (
          <div className="banner" role="alert">
            <span>{explain(branchError)}</span>
          </div>
        )}
        {error && (
          <div className="banner" role="alert">
            <span>{explain(error)}</span>
            {ended ? (
              <button type="button" onClick={props.onSignedOut}>
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
        {files.length > 0 && (
          <div className="attached" data-testid="attached">
            {files.map((file) => (
              <span key={file.name} className="chip">
                {file.name}
              </span>
            ))}
            <button
              type="button"
              className="quiet"
              onClick={() => {
                setFiles([]);
                if (fileInput.current) fileInput.current.value = '';
              }}
            >
              Remove
            </button>
          </div>
        )}
        <div className="compose-row">
          <label className="attach" title="Attach an image or a PDF">
            <input
              ref={fileInput}
              type="file"
              aria-label="Attach a file"
              accept={attachable}
              multiple
              onChange={(event) => setFiles([...(event.target.files ?? [])])}
            />
            <svg aria-hidden="true" viewBox="0 0 24 24" width="20" height="20">
              <path
                d="M21 11.5 12.5 20a5 5 0 0 1-7-7l8.5-8.5a3.3 3.3 0 0 1 4.7 4.7L10.2 17.7a1.7 1.7 0 0 1-2.4-2.4L15.5 7.6"
                fill="none"
                stroke="currentColor"
                strokeWidth="1.8"
                strokeLinecap="round"
              />
            </svg>
          </label>
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
        </div>
      </form>
    </section>
  );
}
