import type { UIMessage } from 'ai';

/** A stored message and the message it follows. */
export interface TreeMessage {
  message: UIMessage;
  /** The id of the message it follows; null for a first message (the first ever, or an edit of it). */
  parentId: string | null;
}

/**
 * A conversation's messages as a tree: an edit or a regeneration starts a new branch beside the one
 * it replaces, and nothing stored is rewritten. One branch is active: the one shown, and answered from.
 */
export interface MessageTree {
  /** Every message of every branch, in the order first saved (a parent always before its children). */
  messages: TreeMessage[];
  /** The last message of the active branch; null when there is no message yet. */
  activeId: string | null;
}

/** The active branch and, along it, the choices a client can switch between. */
export interface BranchView {
  /** The active branch, first message first. */
  messages: UIMessage[];
  /**
   * For each message of the active branch that has siblings (other edits of a user message, other
   * answers to one message): the ids of all of them, itself included, oldest first.
   */
  siblings: Record<string, string[]>;
}

/** The messages from the first to `endId`, following parents (empty when `endId` is null or unknown). */
export function branchTo(tree: MessageTree, endId: string | null): UIMessage[] {
  const byId = new Map(tree.messages.map((entry) => [entry.message.id, entry]));
  const branch: UIMessage[] = [];
  // A parent is always saved before its child, so the walk ends; the bound guards a corrupted store.
  for (let entry = endId === null ? undefined : byId.get(endId); entry && branch.length < byId.size;) {
    branch.push(entry.message);
    entry = entry.parentId === null ? undefined : byId.get(entry.parentId);
  }
  return branch.reverse();
}

/** The active branch, with the siblings of each of its messages that has any. */
export function branchView(tree: MessageTree): BranchView {
  const messages = branchTo(tree, tree.activeId);
  const children = childrenOf(tree);
  // No prototype: a message id is the client's choice ("__proto__" included).
  const siblings: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  let parentId: string | null = null;
  for (const message of messages) {
    const choices = children.get(parentId) ?? [];
    if (choices.length > 1) siblings[message.id] = choices;
    parentId = message.id;
  }
  return { messages, siblings };
}

/**
 * Where the active branch ends once a client picks `messageId`: from it, down the newest child at
 * each step, to a last message. Null when `messageId` is not in the tree.
 */
export function newestLeafFrom(tree: MessageTree, messageId: string): string | null {
  if (!messageOf(tree, messageId)) return null;
  const children = childrenOf(tree);
  let leaf = messageId;
  // Bounded like `branchTo`: a corrupted store could hold a cycle.
  for (let steps = 0; steps < tree.messages.length; steps++) {
    const next = children.get(leaf)?.at(-1);
    if (next === undefined) break;
    leaf = next;
  }
  return leaf;
}

/** The stored message with this id and its parent, on any branch; undefined when the tree has none. */
export function messageOf(tree: MessageTree, messageId: string): TreeMessage | undefined {
  return tree.messages.find((entry) => entry.message.id === messageId);
}

/** Child ids by parent id (null: the first messages), oldest first. */
function childrenOf(tree: MessageTree): Map<string | null, string[]> {
  const children = new Map<string | null, string[]>();
  for (const { message, parentId } of tree.messages) {
    const list = children.get(parentId);
    if (list) list.push(message.id);
    else children.set(parentId, [message.id]);
  }
  return children;
}
