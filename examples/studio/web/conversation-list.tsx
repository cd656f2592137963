import type { ConversationListItem } from '@deskpilot/client';
import { useCallback, useEffect, useState, type FormEvent, type MouseEvent } from 'react';
import { chatClient, chatSetup, explain } from './studio-api.ts';

interface ConversationListProps {
  chatServiceUrl: string;
  currentId: string;
  /** Changes when the list should be read again (a turn ended). */
  version: number;
  open: boolean;
  onSelect: (id: string) => void;
  onNew: () => void;
  /** A conversation was deleted (the page leaves it if it is open). */
  onDeleted: (id: string) => void;
}

/** Closes the menu an action was picked from (a `<details>` stays open otherwise). */
const closeMenu = (event: MouseEvent<HTMLButtonElement>) =>
  event.currentTarget.closest('details')?.removeAttribute('open');

const labelOf = (item: ConversationListItem) => item.title ?? item.preview ?? 'Untitled conversation';

/** The representative's conversations in this project, newest activity first: open, rename, archive, delete. */
export function ConversationList(props: ConversationListProps) {
  const { chatServiceUrl, currentId, version } = props;
  const [archived, setArchived] = useState(false);
  const [items, setItems] = useState<ConversationListItem[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);

  /** Calls the chat service with a context fetched for this call (a grant is short-lived). */
  const call = useCallback(
    async <T,>(run: (client: ReturnType<typeof chatClient>, context: Record<string, unknown>) => Promise<T>) =>
      run(chatClient(chatServiceUrl), (await chatSetup()).context),
    [chatServiceUrl],
  );
  const load = useCallback(
    async (cursor?: string) => {
      try {
        const page = await call((client, context) =>
          client.listConversations({ context, archived, ...(cursor ? { cursor } : {}) }),
        );
        setItems((current) => (cursor ? [...current, ...page.conversations] : page.conversations));
        setNext(page.nextCursor);
        setProblem(null);
      } catch (error) {
        setProblem(explain(error));
      }
    },
    [archived, call],
  );

  useEffect(() => {
    void load();
    // A title is written just after a conversation's first answer: read the list once more shortly after.
    const again = setTimeout(() => void load(), 1_500);
    return () => clearTimeout(again);
  }, [load, version]);

  const change = async (action: () => Promise<unknown>) => {
    try {
      await action();
      await load();
    } catch (error) {
      setProblem(explain(error));
    }
  };
  const rename = (id: string) => (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const title = String(new FormData(event.currentTarget).get('title') ?? '').trim();
    setEditing(null);
    if (title)
      void change(() => call((client, context) => client.updateConversation({ sessionId: id, context, title })));
  };
  const setArchive = (id: string, value: boolean) =>
    void change(() =>
      call((client, context) => client.updateConversation({ sessionId: id, context, archived: value })),
    );
  const remove = (id: string) =>
    void change(async () => {
      setConfirming(null);
      await call((client, context) => client.deleteConversation({ sessionId: id, context }));
      props.onDeleted(id);
    });

  return (
    <nav className={`conversation-list${props.open ? ' open' : ''}`} aria-label="Conversations">
      <div className="list-head">
        <h2>{archived ? 'Archived' : 'Conversations'}</h2>
        <button type="button" className="primary" onClick={props.onNew}>
          New conversation
        </button>
      </div>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <ul>
        {items.map((item) => (
          <li key={item.sessionId} aria-current={item.sessionId === currentId ? 'true' : undefined}>
            {editing === item.sessionId ? (
              <form className="rename" onSubmit={rename(item.sessionId)}>
                <input
                  name="title"
                  aria-label="Conversation title"
                  defaultValue={item.title ?? ''}
                  maxLength={120}
                  autoFocus
                  onBlur={() => setEditing(null)}
                  onKeyDown={(event) => event.key === 'Escape' && setEditing(null)}
                />
              </form>
            ) : (
              <button type="button" className="conversation-title" onClick={() => props.onSelect(item.sessionId)}>
                <span className="label">{labelOf(item)}</span>
                {item.status === 'awaiting_approval' && <span className="tag">approval</span>}
              </button>
            )}
            <details className="item-menu">
              <summary aria-label={`Actions for ${labelOf(item)}`}>⋯</summary>
              <div className="menu">
                <button type="button" onClick={(event) => (closeMenu(event), setEditing(item.sessionId))}>
                  Rename
                </button>
                <button
                  type="button"
                  onClick={(event) => (closeMenu(event), setArchive(item.sessionId, !item.archived))}
                >
                  {item.archived ? 'Unarchive' : 'Archive'}
                </button>
                <button
                  type="button"
                  className="danger"
                  onClick={(event) => (closeMenu(event), setConfirming(item.sessionId))}
                >
                  Delete
                </button>
              </div>
            </details>
            {confirming === item.sessionId && (
              <div className="confirm" role="alertdialog" aria-label="Delete conversation">
                <span>Delete “{labelOf(item)}”? Its messages are gone for good.</span>
                <button type="button" className="danger" onClick={() => remove(item.sessionId)}>
                  Delete for good
                </button>
                <button type="button" onClick={() => setConfirming(null)}>
                  Keep
                </button>
              </div>
            )}
          </li>
        ))}
      </ul>
      {items.length === 0 && !problem && (
        <p className="muted">{archived ? 'Nothing archived.' : 'No conversations yet.'}</p>
      )}
      {next && (
        <button type="button" className="quiet" onClick={() => void load(next)}>
          Load more
        </button>
      )}
      <button type="button" className="quiet" onClick={() => setArchived((value) => !value)}>
        {archived ? 'Back to conversations' : 'Show archived'}
      </button>
    </nav>
  );
}
