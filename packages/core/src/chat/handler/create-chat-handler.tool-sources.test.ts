import { jsonSchema, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ChatToolDefinition } from '../tools/chat-tool.js';
import type { ChatToolSource } from '../tools/chat-tool-source.js';
import {
  answerApprovals,
  assistantFrom,
  offeredTools,
  readAll,
  scriptedModel,
  sessionId,
  setupChat,
  textStep,
  toolStep,
  userMessage,
} from './chat.test-support.js';

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c', canPublishArticles: true };
const body = (messages: UIMessage[], chatContext: object = context) => ({
  messages,
  sessionId,
  context: chatContext,
  trigger: 'submit-message',
});
const types = (chunks: UIMessageChunk[]) => chunks.map((chunk) => chunk.type);

/** A source with a knowledge base's read tool and write tool, recording every call it runs. */
function knowledgeBase(overrides: { tools?: ChatToolDefinition[]; fails?: boolean } = {}) {
  const calls: Array<{ tool: string; input: unknown; idempotencyKey: string | undefined; projectKey: string }> = [];
  const asked: string[] = [];
  const tool = (name: string, capability: string, extra: Partial<ChatToolDefinition> = {}): ChatToolDefinition => ({
    name,
    kind: 'mcp',
    capability,
    description: `${name} of the knowledge base`,
    inputSchema: jsonSchema({ type: 'object', properties: { query: { type: 'string' } } }),
    execute: async (input, toolContext) => {
      calls.push({ tool: name, input, idempotencyKey: toolContext.idempotencyKey, projectKey: toolContext.projectKey });
      return { text: `${name} ran` };
    },
    ...extra,
  });
  const tools = overrides.tools ?? [
    tool('kb_search', 'canViewArticles'),
    tool('kb_publish', 'canPublishArticles'),
    tool('kb_archive', 'canViewArticles', { requiresApproval: true }),
  ];
  const source: ChatToolSource = {
    capabilities: { canViewArticles: { kind: 'read' }, canPublishArticles: { kind: 'write' } },
    toolsFor: async ({ projectKey }) => {
      asked.push(projectKey);
      if (overrides.fails) throw new Error('connect ECONNREFUSED');
      return tools;
    },
    capabilityOf: (name) =>
      name === 'kb_publish' ? 'canPublishArticles' : name.startsWith('kb_') ? 'canViewArticles' : undefined,
  };
  return { source, calls, asked, tool };
}

describe('createChatHandler: tools from a tool source', () => {
  it('offers the source’s tools for the project beside the built-ins, and runs a read tool at once', async () => {
    const kb = knowledgeBase();
    const steps = [toolStep({ name: 'kb_search', input: { query: 'returns' } }), textStep('Found it.')];
    const model = scriptedModel((_call, index) => steps[Math.min(index, 1)]!);
    const chat = await setupChat(model, { toolSources: [kb.source] });
    const chunks = await readAll(await chat.post(body([userMessage('search the knowledge base')])));
    expect(offeredTools(model.doStreamCalls[0])).toEqual(
      expect.arrayContaining(['kb_search', 'kb_publish', 'getOrder']),
    );
    expect(types(chunks)).toContain('tool-output-available');
    expect(kb.calls).toEqual([
      { tool: 'kb_search', input: { query: 'returns' }, idempotencyKey: undefined, projectKey: 'acme-b2c' },
    ]);
    expect(kb.asked).toEqual(['acme-b2c']);
  });

  it('a write capability’s tool is not offered without its flag (write flags default off)', async () => {
    const kb = knowledgeBase();
    const model = scriptedModel(() => textStep('ok'));
    const chat = await setupChat(model, { toolSources: [kb.source] });
    await readAll(await chat.post(body([userMessage('hello')], { userEmail: 'rep@example.com' })));
    expect(offeredTools(model.doStreamCalls[0])).toContain('kb_search');
    expect(offeredTools(model.doStreamCalls[0])).not.toContain('kb_publish');
  });

  it('a write proposes a card and runs nothing; approved, it runs once with the approval id as idempotency key', async () => {
    const kb = knowledgeBase();
    const steps = [toolStep({ name: 'kb_publish', input: { query: 'draft-7' } }), textStep('Published.')];
    const model = scriptedModel((_call, index) => steps[Math.min(index, 1)]!);
    const chat = await setupChat(model, { toolSources: [kb.source] });
    const question = userMessage('publish draft 7');
    const chunks = await readAll(await chat.post(body([question])));
    expect(types(chunks)).toContain('tool-approval-request');
    expect(kb.calls).toEqual([]);
    const approvalId = (chunks.find((chunk) => chunk.type === 'tool-approval-request') as { approvalId: string })
      .approvalId;
    expect(chat.approvalStore.dump()[0]).toMatchObject({ toolName: 'kb_publish', state: 'pending' });

    const approved = body([question, answerApprovals(assistantFrom(chunks), true)]);
    await Promise.all([readAll(await chat.post(approved)), readAll(await chat.post(approved))]);
    const replay = await readAll(await chat.post(approved));
    expect(types(replay)).toContain('tool-output-available');
    expect(kb.calls).toEqual([
      { tool: 'kb_publish', input: { query: 'draft-7' }, idempotencyKey: approvalId, projectKey: 'acme-b2c' },
    ]);
  });

  it('requiresApproval puts a read capability’s tool behind the gate too', async () => {
    const kb = knowledgeBase();
    const steps = [toolStep({ name: 'kb_archive', input: { query: 'old' } }), textStep('ok')];
    const model = scriptedModel((_call, index) => steps[Math.min(index, 1)]!);
    const chat = await setupChat(model, { toolSources: [kb.source] });
    const chunks = await readAll(await chat.post(body([userMessage('archive the old article')])));
    expect(types(chunks)).toContain('tool-approval-request');
    expect(kb.calls).toEqual([]);
  });

  it('a source tool named like a built-in, or twice, or skipping the gate of a write, is left out and reported', async () => {
    const kb = knowledgeBase();
    kb.source.toolsFor = async () => [
      kb.tool('refundOrder', 'canViewArticles'),
      kb.tool('kb_search', 'canViewArticles'),
      kb.tool('kb_search', 'canViewArticles'),
      kb.tool('kb_publish', 'canPublishArticles', { requiresApproval: false }),
      kb.tool('kb_unknown', 'canDoAnything'),
    ];
    const steps = [toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'x' } }), textStep('ok')];
    const model = scriptedModel((_call, index) => steps[Math.min(index, 1)]!);
    const chat = await setupChat(model, { toolSources: [kb.source] });
    await readAll(await chat.post(body([userMessage('refund')], { ...context, canRefundOrders: true })));
    const offered = offeredTools(model.doStreamCalls[0]);
    expect(offered.filter((name) => name === 'kb_search')).toHaveLength(1);
    expect(offered).not.toContain('kb_publish');
    expect(offered).not.toContain('kb_unknown');
    // The built-in's own card, through the commerce backend: the source's tool of that name never ran.
    expect(kb.calls).toEqual([]);
    expect(chat.approvalStore.dump()[0]).toMatchObject({ toolName: 'refundOrder', capabilities: expect.any(Object) });
    expect(chat.errors.map(String)).toEqual([
      expect.stringContaining('refundOrder, a name the chat already has'),
      expect.stringContaining('Two tools of the sources are named kb_search'),
      expect.stringContaining('write always asks for approval'),
      expect.stringContaining('canDoAnything, which is not registered'),
    ]);
    // Reported once, not on every turn.
    await readAll(await chat.post(body([userMessage('again')], context)));
    expect(chat.errors).toHaveLength(4);
  });

  it('a source that fails leaves its tools out and the chat goes on', async () => {
    const kb = knowledgeBase({ fails: true });
    const model = scriptedModel(() => textStep('Still here.'));
    const chat = await setupChat(model, { toolSources: [kb.source] });
    const chunks = await readAll(await chat.post(body([userMessage('hello')])));
    expect(types(chunks).at(-1)).toBe('finish');
    expect(offeredTools(model.doStreamCalls[0])).not.toContain('kb_search');
    expect(String(chat.errors[0])).toContain('ECONNREFUSED');
  });

  it('an approval answered while the source is down is re-checked against the configured capability and runs nothing', async () => {
    const kb = knowledgeBase();
    // After the approval runs, the model calls the tool again, with another input.
    const steps = [
      toolStep({ name: 'kb_publish', input: { query: 'draft' } }),
      toolStep({ name: 'kb_publish', input: { query: 'other' }, id: 'call-again' }),
      textStep('ok'),
    ];
    const model = scriptedModel((_call, index) => steps[Math.min(index, 2)]!);
    const chat = await setupChat(model, { toolSources: [kb.source] });
    const question = userMessage('publish');
    const card = assistantFrom(await readAll(await chat.post(body([question]))));
    kb.source.toolsFor = () => Promise.reject(new Error('server went away'));
    const answered = await readAll(await chat.post(body([question, answerApprovals(card, true)])));
    expect(types(answered).at(-1)).toBe('finish');
    expect(answered).toContainEqual(
      expect.objectContaining({
        type: 'tool-output-error',
        errorText: 'kb_publish cannot be reached now; nothing was done. Propose it again later.',
      }),
    );
    expect(answered).toContainEqual(
      expect.objectContaining({
        type: 'tool-output-error',
        toolCallId: 'call-again',
        errorText: expect.stringContaining('needs an approval first'),
      }),
    );
    expect(types(answered)).not.toContain('tool-approval-request');
    expect(kb.calls).toEqual([]);
    // Decided for good: an answer sent again replays the recorded error and runs nothing.
    expect(chat.approvalStore.dump()[0]).toMatchObject({ state: 'done', outcome: { type: 'error' } });
    kb.source.toolsFor = async () => [kb.tool('kb_publish', 'canPublishArticles')];
    await readAll(await chat.post(body([question, answerApprovals(card, true)])));
    expect(kb.calls).toEqual([]);
    // The stand-in is offered for the answered call only: the model calling it anew proposes nothing.
    expect(chat.approvalStore.dump()).toHaveLength(1);
    // Without the flag, the same answer is refused by the gate: the capability came from configuration.
    const revoked = await setupChat(
      scriptedModel((_call, index) => steps[Math.min(index, 1)]!),
      {
        toolSources: [knowledgeBase().source],
      },
    );
    const card2 = assistantFrom(await readAll(await revoked.post(body([question]))));
    await readAll(
      await revoked.post(body([question, answerApprovals(card2, true)], { ...context, canPublishArticles: false })),
    );
    expect(revoked.approvalStore.dump()[0]).toMatchObject({ state: 'denied', reason: 'capability_revoked' });
  });

  it('refuses to start when a source registers a built-in capability with another kind', () => {
    const kb = knowledgeBase();
    kb.source = { ...kb.source, capabilities: { canRefundOrders: { kind: 'read' } } };
    return expect(
      setupChat(
        scriptedModel(() => textStep('ok')),
        { toolSources: [kb.source] },
      ),
    ).rejects.toThrow(/canRefundOrders is a write capability/);
  });
});
