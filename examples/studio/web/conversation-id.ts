/** The chat service's `sessionId` of this user's conversation in a project, kept across reloads. */
export function conversationId(userEmail: string, projectKey: string, storage: Storage = localStorage): string {
  const key = `deskpilot.conversation:${userEmail}:${projectKey}`;
  let id = storage.getItem(key);
  if (!id || !/^[0-9a-f-]{36}$/i.test(id)) storage.setItem(key, (id = crypto.randomUUID()));
  return id;
}

/** Starts a fresh conversation for this user and project; returns its id. */
export function newConversationId(userEmail: string, projectKey: string, storage: Storage = localStorage): string {
  const id = crypto.randomUUID();
  storage.setItem(`deskpilot.conversation:${userEmail}:${projectKey}`, id);
  return id;
}
