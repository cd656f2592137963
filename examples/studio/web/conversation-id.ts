/** A conversation's id, and whether this page just made it (then the chat service has nothing stored for it yet). */
export interface ConversationRef {
  id: string;
  fresh: boolean;
}

/** The chat service's `sessionId` of this user's conversation in a project, kept across reloads. */
export function conversationId(
  userEmail: string,
  projectKey: string,
  storage: Storage = localStorage,
): ConversationRef {
  const id = storage.getItem(`deskpilot.conversation:${userEmail}:${projectKey}`);
  return id && /^[0-9a-f-]{36}$/i.test(id) ? { id, fresh: false } : newConversationId(userEmail, projectKey, storage);
}

/** Starts a fresh conversation for this user and project. */
export function newConversationId(
  userEmail: string,
  projectKey: string,
  storage: Storage = localStorage,
): ConversationRef {
  const id = crypto.randomUUID();
  storage.setItem(`deskpilot.conversation:${userEmail}:${projectKey}`, id);
  return { id, fresh: true };
}

/** Opens one of this user's conversations in a project (and keeps it open across reloads). */
export function openConversationId(
  userEmail: string,
  projectKey: string,
  id: string,
  storage: Storage = localStorage,
): ConversationRef {
  storage.setItem(`deskpilot.conversation:${userEmail}:${projectKey}`, id);
  return { id, fresh: false };
}
