import { request as httpRequest, type Agent } from 'node:http';
import { connect } from 'node:net';
import { readChatStream } from '@deskpilot/core';

/** One chunk of a chat stream, as core's `readChatStream` yields it (the AI SDK's `UIMessageChunk`). */
export type UIMessageChunk = ReturnType<typeof readChatStream> extends AsyncGenerator<infer Chunk> ? Chunk : never;

/** A chat context of its own: a fresh identity, so no rate limit window or conversation is shared. */
export const chatContext = () => ({ userEmail: `rep-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c' });

/** A user message as `useChat` sends it. */
export const userMessage = (text: string, id: string = crypto.randomUUID()) => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});

/** A chat request body: one new conversation, one user message. */
export const turnBody = (text: string, context: object = chatContext(), sessionId: string = crypto.randomUUID()) => ({
  sessionId,
  context,
  messages: [userMessage(text)],
});

/** POSTs JSON with fetch. */
export const postJson = (url: string, path: string, body: unknown, init: RequestInit = {}) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...init,
  });

/** Every chunk of a chat stream. */
export async function readChunks(response: Response): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  for await (const chunk of readChatStream(response)) chunks.push(chunk);
  return chunks;
}

/**
 * The assistant message `useChat` sends back when the user answers the approval card of `proposal` (the
 * chunks of the turn that proposed a write): the card's tool part with the answer.
 */
export function answeredCard(proposal: UIMessageChunk[], approved: boolean) {
  const request = proposal.find((chunk) => chunk.type === 'tool-approval-request') as
    { approvalId: string; toolCallId: string } | undefined;
  if (!request) throw new Error(`no approval card in: ${proposal.map((chunk) => chunk.type).join(', ')}`);
  const call = proposal.find(
    (chunk) => chunk.type === 'tool-input-available' && chunk.toolCallId === request.toolCallId,
  ) as { toolName: string; input: unknown };
  const messageId = (proposal.find((chunk) => chunk.type === 'start') as { messageId: string }).messageId;
  return {
    id: messageId,
    role: 'assistant',
    parts: [
      {
        type: `tool-${call.toolName}`,
        toolCallId: request.toolCallId,
        state: 'approval-responded',
        input: call.input,
        approval: { id: request.approvalId, approved },
      },
    ],
  };
}

/** A turn the client was told succeeded: the stream ended with `finish` and carried no `error` part. */
export const isConfirmed = (chunks: UIMessageChunk[]) =>
  chunks.at(-1)?.type === 'finish' && !chunks.some((chunk) => chunk.type === 'error');

/** What `/chat/history` holds for a conversation. */
export interface StoredConversation {
  messages: Array<{ id: string; role: string; metadata?: { status?: string } }>;
  lastTurnStatus: string | null;
}

export async function readHistory(
  url: string,
  body: { sessionId: string; context: object },
): Promise<StoredConversation> {
  const response = await postJson(url, '/chat/history', { sessionId: body.sessionId, context: body.context });
  if (!response.ok) throw new Error(`history answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as StoredConversation;
}

/**
 * Whether one single-turn conversation is whole in history: its user message, then an assistant
 * message with a status, and `lastTurnStatus` set. Returns what is wrong, or undefined.
 */
export function missingFromTurn(conversation: StoredConversation): string | undefined {
  const roles = conversation.messages.map((message) => message.role).join(',');
  if (roles !== 'user,assistant') return `messages ${roles || '(none)'}`;
  if (!conversation.messages[1]!.metadata?.status) return 'assistant message without a status';
  if (conversation.lastTurnStatus === null) return 'lastTurnStatus null';
  return undefined;
}

/** Counts the turns not whole in history (see {@link missingFromTurn}), with the reasons. */
export async function countLost(
  url: string,
  turns: ReadonlyArray<{ sessionId: string; context: object }>,
): Promise<{ lost: number; reasons: string[] }> {
  const reasons: string[] = [];
  for (const turn of turns) {
    const missing = missingFromTurn(await readHistory(url, turn));
    if (missing) reasons.push(`${turn.sessionId}: ${missing}`);
  }
  return { lost: reasons.length, reasons };
}

/**
 * Sends a whole POST /chat on a raw connection, then resets the connection before a byte of the
 * answer is read: a client that gave up before the response headers. `beforeReset` runs once the
 * request is written (wait there for the server to be busy with it).
 */
export async function abortBeforeHeaders(
  url: string,
  body: unknown,
  beforeReset: () => Promise<void> = async () => {},
): Promise<void> {
  const { hostname, port } = new URL(url);
  const text = JSON.stringify(body);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  await new Promise<void>((resolve, reject) =>
    socket.write(
      `POST /chat HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
      (error) => (error ? reject(error) : resolve()),
    ),
  );
  await beforeReset();
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.resetAndDestroy();
  await closed;
}

/** A response read over `node:http` (which, unlike fetch, lets a test pin requests to one keep-alive socket). */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** POSTs JSON over `node:http` with `agent`; resolves once the whole body is read. */
export function postWithAgent(url: string, path: string, body: unknown, agent: Agent): Promise<RawResponse> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${url}${path}`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (response) => {
        let received = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: received }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(text);
  });
}
