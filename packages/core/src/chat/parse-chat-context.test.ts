import { describe, expect, it } from 'vitest';
import { builtinCapabilities, defineCapabilities, resolveCapabilities } from './capabilities.js';
import { parseChatContext, safeParseChatContext } from './parse-chat-context.js';

const reads = { canViewOrders: true, canViewCustomers: true, canViewProducts: true, canViewTickets: true };
const noWrites = { canRefundOrders: false, canCancelOrders: false, canCreateTickets: false, canUpdateTickets: false };

describe('parseChatContext', () => {
  it('applies safe defaults and least privilege to an empty or missing context', () => {
    for (const input of [undefined, null, {}]) {
      expect(parseChatContext(input)).toEqual({
        userEmail: 'anonymous@deskpilot.invalid',
        userRole: 'viewer',
        projectKey: 'unassigned',
        businessType: 'b2c',
        pageContext: null,
        proactiveHint: null,
        workingMemoryBlock: null,
        capabilities: { ...reads, ...noWrites },
      });
    }
  });

  it('trims and lower-cases the email', () => {
    expect(parseChatContext({ userEmail: '  Rep@Example.COM ' }).userEmail).toBe('rep@example.com');
  });

  it('grants a write only when its flag is true, and lets reads be switched off', () => {
    const context = parseChatContext({ canRefundOrders: true, canViewCustomers: false, canCancelOrders: false });
    expect(context.capabilities).toMatchObject({ canRefundOrders: true, canCancelOrders: false, canViewCustomers: false, canViewOrders: true });
  });

  it('ignores unknown flags: they grant nothing', () => {
    const context = parseChatContext({ canDeleteEverything: true, canRefundOrders: false });
    expect(context.capabilities).not.toHaveProperty('canDeleteEverything');
  });

  it.each([
    ['a string flag', { canRefundOrders: 'true' }, 'context.canRefundOrders'],
    ['a numeric flag', { canViewOrders: 1 }, 'context.canViewOrders'],
    ['an unknown non-boolean flag', { canFly: 'yes' }, 'context.canFly'],
    ['a bad email', { userEmail: 'not an email' }, 'context.userEmail'],
    ['a bad businessType', { businessType: 'b2g' }, 'context.businessType'],
    ['a non-object pageContext', { pageContext: 'x' }, 'context.pageContext'],
    ['a project key with spaces', { projectKey: 'acme b2c' }, 'context.projectKey'],
  ])('rejects %s with the field path', (_label, input, path) => {
    const result = safeParseChatContext(input);
    expect(result.success).toBe(false);
    if (!result.success) {
      expect(result.error.code).toBe('invalid_request');
      expect(result.error.errors?.map((error) => error.path)).toContain(path);
    }
  });

  it('rejects a context that is not an object', () => {
    expect(safeParseChatContext('admin').success).toBe(false);
    expect(safeParseChatContext([]).success).toBe(false);
  });

  it('knows flags a library user registers', () => {
    const capabilities = defineCapabilities({ canIssueVouchers: { kind: 'write' }, canViewInvoices: { kind: 'read' } });
    const context = parseChatContext({}, { capabilities });
    expect(context.capabilities).toMatchObject({ canIssueVouchers: false, canViewInvoices: true });
    expect(parseChatContext({ canIssueVouchers: true }, { capabilities }).capabilities.canIssueVouchers).toBe(true);
  });
});

describe('defineCapabilities', () => {
  it('refuses bad names and kind changes of built-ins', () => {
    expect(() => defineCapabilities({ issueVouchers: { kind: 'write' } })).toThrow(TypeError);
    expect(() => defineCapabilities({ canRefundOrders: { kind: 'read' } })).toThrow(TypeError);
    expect(() => defineCapabilities({ canX: { kind: 'admin' as 'read' } })).toThrow(TypeError);
  });

  it('resolves only registered flags', () => {
    expect(Object.keys(resolveCapabilities({ canRefundOrders: true, canHack: true }, builtinCapabilities)).sort()).toEqual(Object.keys(builtinCapabilities).sort());
  });
});
