import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ApprovalRecord, ApprovalStore } from '../chat/approval/approval-store.js';
import type { ChatStore } from '../chat/conversation/chat-store.js';
import type { SessionStore } from '../session/session-store.js';
import { normalizeEmail, type UserDirectory } from '../session/user-directory.js';
import { createInputArbitraries } from './create-input-arbitraries.js';

/** A factory of a fresh store; the suite calls it once per property. */
type Make<T> = () => T | Promise<T>;

/** Options of {@link testInputConformance}: the stores to check (any subset) and the run size. */
export interface InputConformanceOptions {
  chatStore?: Make<ChatStore>;
  approvalStore?: Make<ApprovalStore>;
  sessionStore?: Make<SessionStore>;
  /** Only read with request-shaped input here (never written): its users need not be empty. */
  userDirectory?: Make<UserDirectory>;
  /** Generated inputs per property. @default 100 */
  numRuns?: number;
  /** Generated inputs for the directory. @default 20 */
  directoryRuns?: number;
  /** fast-check seed: the same seed generates the same inputs. @default 9 */
  seed?: number;
}

/** The value as JSON means it: `-0` is `0`, an undefined property is absent. What a JSON store keeps. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/**
 * Conformance property "every input the handler accepts, every store stores": generated valid text
 * (every Unicode scalar value but NUL) and JSON values within the edge's limits go into each store
 * through the fields that come from requests, and come back exactly (identity fields trimmed, as the
 * handlers store them). Needs `fast-check` installed (loaded when the suite runs).
 *
 * @example
 * testInputConformance({ chatStore: () => createPostgresChatStore(client), approvalStore: () => createPostgresApprovalStore(client) });
 */
export function testInputConformance(options: InputConformanceOptions): void {
  const numRuns = options.numRuns ?? 100;
  const seed = options.seed ?? 9;
  const load = async () => {
    const fc = await import('fast-check');
    const input = createInputArbitraries(fc);
    // Identity fields reach a store trimmed, as the handlers trim them (String.prototype.trim also
    // takes U+FEFF, which PGlite's protocol reader drops from the start of any text value it reads).
    return { fc, input, identity: input.text.map((text) => text.trim()) };
  };

  // Only the stores given get a test: a skipped line per missing store would be noise.
  const itWith = (store: unknown) => (store ? it : ((() => {}) as unknown as typeof it));

  describe('input conformance: every accepted input is stored exactly', () => {
    itWith(options.chatStore)('ChatStore keeps any valid userEmail and projectKey of a conversation', async () => {
      const { fc, identity } = await load();
      const store = await options.chatStore!();
      await fc.assert(
        fc.asyncProperty(identity, identity, async (userEmail, projectKey) => {
          const init = { id: crypto.randomUUID(), userEmail, projectKey, createdAt: 1_000, updatedAt: 1_000 };
          const { session } = await store.getOrCreateSession(init);
          expect(session).toMatchObject({ userEmail, projectKey });
          expect(await store.getSession(init.id)).toMatchObject({ userEmail, projectKey });
        }),
        { numRuns, seed },
      );
    });

    itWith(options.chatStore)(
      'ChatStore keeps any valid message ids, texts, tool inputs, outputs and metadata',
      async () => {
        const { fc, input } = await load();
        const store = await options.chatStore!();
        const message = fc.record({
          userId: input.nonEmptyText,
          texts: fc.array(input.text, { minLength: 1, maxLength: 3 }),
          assistantId: input.nonEmptyText,
          toolCallId: input.nonEmptyText,
          toolInput: input.jsonValue,
          toolOutput: input.jsonValue,
          metadata: input.jsonValue,
        });
        await fc.assert(
          fc.asyncProperty(message, async (generated) => {
            const { session } = await store.getOrCreateSession({
              id: crypto.randomUUID(),
              userEmail: 'rep@example.com',
              projectKey: 'acme-b2c',
              createdAt: 1_000,
              updatedAt: 1_000,
            });
            const user: UIMessage = {
              id: generated.userId,
              role: 'user',
              parts: generated.texts.map((text) => ({ type: 'text', text })),
            };
            const assistant = {
              // Message ids are unique per conversation: the assistant's must differ from the user's.
              id: generated.assistantId === generated.userId ? `${generated.assistantId}-reply` : generated.assistantId,
              role: 'assistant',
              metadata: generated.metadata,
              parts: [
                {
                  type: 'tool-getOrder',
                  toolCallId: generated.toolCallId,
                  state: 'output-available',
                  input: generated.toolInput,
                  output: generated.toolOutput,
                },
              ],
            } as UIMessage;
            await store.upsertMessages(session.id, [user, assistant]);
            expect(asJson(await store.getMessages(session.id))).toEqual(asJson([user, assistant]));
          }),
          { numRuns, seed },
        );
      },
    );

    itWith(options.approvalStore)('ApprovalStore keeps any valid tool input, recorded output and call id', async () => {
      const { fc, input, identity } = await load();
      const store = await options.approvalStore!();
      await fc.assert(
        fc.asyncProperty(input.jsonValue, identity, input.jsonValue, async (toolInput, callId, output) => {
          const toolCallId = `call-${callId}`;
          const record: ApprovalRecord = {
            id: `apv_${crypto.randomUUID()}`,
            chatSessionId: crypto.randomUUID(),
            userEmail: 'rep@example.com',
            projectKey: 'acme-b2c',
            toolName: 'refundOrder',
            toolCallId,
            input: toolInput,
            inputHash: 'c0ffee'.repeat(10) + 'c0ff',
            capabilities: { canRefundOrders: true },
            state: 'pending',
            outcome: null,
            reason: null,
            createdAt: 1_000,
            expiresAt: 901_000,
            decision: null,
          };
          await store.create(record);
          expect(asJson(await store.get(record.id))).toEqual(asJson(record));
          await store.transition(record.id, 'pending', 'executing');
          const done = await store.transition(record.id, 'executing', 'done', { outcome: { type: 'output', output } });
          expect(asJson(done?.outcome)).toEqual(asJson({ type: 'output', output }));
          expect(asJson((await store.get(record.id))?.outcome)).toEqual(asJson({ type: 'output', output }));
        }),
        { numRuns, seed },
      );
    });

    itWith(options.sessionStore)(
      'SessionStore answers any valid id with null, and keeps any valid project and client',
      async () => {
        const { fc, input, identity } = await load();
        const store = await options.sessionStore!();
        await fc.assert(
          fc.asyncProperty(input.text, identity, identity, async (lookup, projectKey, clientId) => {
            expect(await store.get(`missing-${lookup}`)).toBeNull();
            const record = {
              id: `session-${crypto.randomUUID()}`,
              secretHash: 'digest',
              userId: 'user-1',
              projectKey,
              clientId,
              createdAt: 1_000,
              expiresAt: 100_000,
              idleExpiresAt: 50_000,
              version: 1,
            };
            await store.create(record);
            expect(await store.get(record.id)).toEqual(record);
          }),
          { numRuns, seed },
        );
      },
    );

    itWith(options.userDirectory)(
      'UserDirectory answers any valid email and user id with null, never an error',
      async () => {
        const { fc, input } = await load();
        const directory = await options.userDirectory!();
        await fc.assert(
          fc.asyncProperty(input.text, input.text, async (email, userId) => {
            // Prefixed, so a generated email never names a user the factory may have seeded.
            expect(await directory.findCredentials(normalizeEmail(`nobody-${email}`))).toBeNull();
            expect(await directory.getAccount(`nobody-${userId}`)).toBeNull();
          }),
          { numRuns: options.directoryRuns ?? 20, seed },
        );
      },
    );
  });
}
