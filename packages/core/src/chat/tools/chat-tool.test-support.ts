import { createFakeClock } from '../../testing/fake-clock.js';
import { createDemoCommerceBackend, createDemoTicketBackend } from '../../demo.js';
import { asSchema } from 'ai';
import type { ChatToolContext, ChatToolDefinition } from './chat-tool.js';

/** A tool context on fresh demo backends and a fake clock: project `acme-b2c`, user `rep@example.com`. */
export function createToolTestContext(overrides: Partial<ChatToolContext> = {}) {
  const clock = createFakeClock();
  const commerce = createDemoCommerceBackend({ now: clock.now });
  const tickets = createDemoTicketBackend({ now: clock.now });
  const context: ChatToolContext = {
    userEmail: 'rep@example.com',
    projectKey: 'acme-b2c',
    businessType: 'b2c',
    commerce,
    tickets,
    ...overrides,
  };
  return { clock, commerce, tickets, context, writeCalls: () => [...commerce.calls, ...tickets.calls] };
}

/** Validates raw model arguments the way the AI SDK does, then runs the tool. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read fields of any tool's output
export async function runTool(tool: ChatToolDefinition, rawInput: unknown, context: ChatToolContext): Promise<any> {
  const parsed = await asSchema(tool.inputSchema).validate!(rawInput);
  if (!parsed.success) throw parsed.error;
  return tool.execute(parsed.value, context);
}
