import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { builtinCapabilities } from '../../capabilities/capabilities.js';
import { builtinChatTools } from './builtin-tools.js';
import { createToolTestContext, runTool } from './chat-tool.test-support.js';

/** One valid input per built-in tool. */
const sampleInputs: Record<string, Record<string, unknown>> = {
  searchProducts: { query: 'shoe' },
  getOrder: { orderId: 'ORD-1001' },
  searchOrders: { status: 'paid' },
  getCustomer: { customerId: 'CUS-1001' },
  refundOrder: { orderId: 'ORD-1001', reason: 'damaged' },
  cancelOrder: { orderId: 'ORD-1002', reason: 'ordered twice' },
  getBusinessUnit: { businessUnitId: 'BU-101' },
  listQuotes: {},
  searchTickets: { status: 'open' },
  getTicket: { ticketId: 'TCK-1001' },
  createTicket: { subject: 'Parcel lost', description: 'The carrier lost it.' },
  addTicketComment: { ticketId: 'TCK-1001', body: 'Looking into it.' },
  showOrderCard: { orderId: 'ORD-1001' },
  showProductCard: { sku: 'SKU-1001' },
  showCustomerCard: { customerId: 'CUS-1001' },
};

const isWrite = (capability: string | null) =>
  capability !== null && builtinCapabilities[capability as keyof typeof builtinCapabilities]?.kind === 'write';

describe('builtinChatTools', () => {
  it('has every documented tool once, each with a built-in capability and its kind', () => {
    const names = builtinChatTools.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(Object.keys(sampleInputs).sort());
    for (const tool of builtinChatTools) {
      expect(Object.keys(builtinCapabilities), tool.name).toContain(tool.capability);
      expect(tool.description.length, tool.name).toBeGreaterThan(20);
      expect(tool.description.length, tool.name).toBeLessThanOrEqual(300);
    }
    const kinds = Object.fromEntries(builtinChatTools.map((tool) => [tool.name, tool.kind]));
    expect(kinds).toMatchObject({
      searchProducts: 'commerce',
      refundOrder: 'commerce',
      listQuotes: 'commerce',
      createTicket: 'ticket',
      getTicket: 'ticket',
      showOrderCard: 'ui',
      showCustomerCard: 'ui',
    });
    expect(
      builtinChatTools
        .filter((tool) => isWrite(tool.capability))
        .map((tool) => tool.name)
        .sort(),
    ).toEqual(['addTicketComment', 'cancelOrder', 'createTicket', 'refundOrder']);
  });

  it('marks exactly the b2b tools as b2b-only', () => {
    const limited = builtinChatTools.filter((tool) => tool.businessTypes !== undefined);
    expect(limited.map((tool) => [tool.name, tool.businessTypes])).toEqual([
      ['getBusinessUnit', ['b2b']],
      ['listQuotes', ['b2b']],
    ]);
  });

  it.each(builtinChatTools.map((tool) => [tool.name, tool] as const))(
    '%s: its schema converts to the JSON Schema the model is sent',
    (_name, tool) => {
      const schema = z.toJSONSchema(tool.inputSchema as z.ZodType, { target: 'draft-7', io: 'input' });
      expect(schema).toMatchObject({ type: 'object' });
      expect(schema.properties).not.toHaveProperty('projectKey');
      expect(schema.properties).not.toHaveProperty('userEmail');
    },
  );

  it.each(builtinChatTools.map((tool) => [tool.name, tool] as const))(
    '%s: identity in the arguments is dropped, the context decides',
    async (_name, tool) => {
      const input = sampleInputs[tool.name]!;
      const parsed = (tool.inputSchema as z.ZodType).parse({
        ...input,
        projectKey: 'globex-b2c',
        userEmail: 'mallory@example.com',
        idempotencyKey: 'forged',
      });
      expect(parsed).not.toHaveProperty('projectKey');
      expect(parsed).not.toHaveProperty('userEmail');
      expect(parsed).not.toHaveProperty('idempotencyKey');
      if (isWrite(tool.capability)) return;
      const { context, writeCalls } = createToolTestContext();
      const honest = await runTool(tool, input, context);
      const forged = await runTool(tool, { ...input, projectKey: 'globex-b2c' }, context);
      expect(forged).toEqual(honest);
      expect(writeCalls()).toEqual([]);
    },
  );

  it.each(builtinChatTools.filter((tool) => isWrite(tool.capability)).map((tool) => [tool.name, tool] as const))(
    '%s: fails closed without an idempotency key, and runs for the context’s project and user with one',
    async (_name, tool) => {
      const { context, writeCalls } = createToolTestContext();
      await expect(runTool(tool, sampleInputs[tool.name], context)).rejects.toThrow(/idempotency key/);
      expect(writeCalls()).toEqual([]);
      await runTool(
        tool,
        { ...sampleInputs[tool.name], projectKey: 'globex-b2c' },
        { ...context, idempotencyKey: 'apv_1' },
      );
      expect(writeCalls()).toEqual([{ method: tool.name, projectKey: 'acme-b2c', idempotencyKey: 'apv_1' }]);
    },
  );
});
