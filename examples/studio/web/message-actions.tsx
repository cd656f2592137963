import { useState, type FormEvent, type KeyboardEvent } from 'react';

/** What a person can do with one message: edit a question, ask for another answer, switch versions. */
export interface MessageActionsProps {
  role: 'user' | 'assistant' | 'system';
  messageId: string;
  /** The ids of this message and its other versions, oldest first (from the history's `siblings`). */
  siblings: readonly string[] | undefined;
  /** While an answer runs, nothing here changes the conversation. */
  disabled: boolean;
  onEdit: () => void;
  onRegenerate: () => void;
  onSwitch: (messageId: string) => void;
}

/** "‹ 2 / 3 ›" when the message has other versions, then Edit (a question) or Regenerate (an answer). */
export function MessageActions(props: MessageActionsProps) {
  const { siblings, messageId, disabled } = props;
  const index = siblings?.indexOf(messageId) ?? -1;
  return (
    <div className="message-actions">
      {siblings && index >= 0 && (
        <span className="branch-picker" role="group" aria-label="Versions">
          <button
            type="button"
            className="quiet"
            aria-label="Previous version"
            disabled={disabled || index === 0}
            onClick={() => props.onSwitch(siblings[index - 1]!)}
          >
            ‹
          </button>
          <span data-testid="version">
            {index + 1} / {siblings.length}
          </span>
          <button
            type="button"
            className="quiet"
            aria-label="Next version"
            disabled={disabled || index === siblings.length - 1}
            onClick={() => props.onSwitch(siblings[index + 1]!)}
          >
            ›
          </button>
        </span>
      )}
      {props.role === 'user' ? (
        <button type="button" className="quiet" disabled={disabled} onClick={props.onEdit}>
          Edit
        </button>
      ) : (
        <button type="button" className="quiet" disabled={disabled} onClick={props.onRegenerate}>
          Regenerate
        </button>
      )}
    </div>
  );
}

/** The editor of a question: its text, sent as a new version (the old one stays, one arrow away). */
export function EditForm({
  text,
  onSave,
  onCancel,
}: {
  text: string;
  onSave: (text: string) => void;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState(text);
  const save = (event?: FormEvent) => {
    event?.preventDefault();
    if (draft.trim()) onSave(draft.trim());
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Escape') onCancel();
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) save(event);
  };
  return (
    <form className="edit-form" onSubmit={save}>
      <textarea
        aria-label="Edit message"
        rows={2}
        value={draft}
        onChange={(event) => setDraft(event.target.value)}
        onKeyDown={onKeyDown}
        autoFocus
      />
      <div className="edit-actions">
        <button type="submit" className="primary" disabled={!draft.trim()}>
          Save and send
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
