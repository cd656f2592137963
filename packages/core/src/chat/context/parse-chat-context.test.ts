import { describe, expect, it } from 'vitest';
import { builtinCapabilities, defineCapabilities, resolveCapabilities } from '../../capabilities/capabilities.js';
import { parseChatContext, safeParseChatContext } from './parse-chat-context.js';

/** `{ a: { a: … 1 } }`, `depth` objects deep. */
const nested = (depth: number): unknown => (depth === 0 ? 1 : { a: nested(depth - 1) });

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
    expect(context.capabilities).toMatchObject({
      canRefundOrders: true,
      canCancelOrders: false,
      canViewCustomers: false,
      canViewOrders: true,
    });
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
    ['a NUL in the email', { userEmail: 'rep@example.com\u0000' }, 'context.userEmail'],
    ['a lone surrogate in the role', { userRole: 'agent\ud800' }, 'context.userRole'],
    ['a pageContext deeper than 32 levels', { pageContext: nested(33) }, `context.pageContext${'.a'.repeat(32)}`],
    ['a pageContext over 16 KiB of JSON', { pageContext: { html: 'x'.repeat(16_384) } }, 'context.pageContext'],
    ['a proactiveHint over 4 KiB of JSON', { proactiveHint: 'x'.repeat(4095) }, 'context.proactiveHint'],
    [
      'a NUL inside a workingMemoryBlock',
      { workingMemoryBlock: { notes: ['fine', 'not\u0000fine'] } },
      'context.workingMemoryBlock.notes.1',
    ],
    ['a lone surrogate in a pageContext key', { pageContext: { ['\udc00']: 1 } }, 'context.pageContext.\\udc00'],
    ['a pageContext that is not JSON', { pageContext: { when: new Date(0) } }, 'context.pageContext.when'],
    ['a project key with spaces', { projectKey: 'acme b2c' }, 'context.projectKey'],
  ])('rejects %s with the field path', (_label, input, path) => {
    const result = safeParseChatContext(input);
    expect(result.success).toBe(false);
    if (!result.success) {
      expect(result.error.code).toBe('invalid_request');
      expect(result.error.errors?.map((error) => error.path)).toContain(path);
    }
  });

  it('accepts any JSON value within the limits for the fields of unspecified shape, unchanged', () => {
    const pageContext = { page: '/orders/ORD-1001', selection: [1, 'two', null, { deep: nested(28) }] };
    for (const value of [pageContext, ['a', 1], 'text', 42, true, nested(32)]) {
      const context = parseChatContext({ pageContext: value, proactiveHint: value, workingMemoryBlock: value });
      expect(context.pageContext).toBe(value);
      expect(context.proactiveHint).toBe(value);
      expect(context.workingMemoryBlock).toBe(value);
    }
    expect(parseChatContext({ pageContext: JSON.parse('{"__proto__":{"polluted":true}}') }).pageContext).toHaveProperty(
      '__proto__',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('takes its depth and size limits from the options', () => {
    expect(safeParseChatContext({ pageContext: nested(5) }, { limits: { contextValueDepth: 4 } }).success).toBe(false);
    expect(
      safeParseChatContext({ proactiveHint: 'x'.repeat(100) }, { limits: { proactiveHintBytes: 64 } }).success,
    ).toBe(false);
    expect(
      safeParseChatContext({ pageContext: { html: 'x'.repeat(20_000) } }, { limits: { pageContextBytes: 32_768 } })
        .success,
    ).toBe(true);
  });

  it('rejects a context that is not an object with an error of its own, naming the field', () => {
    for (const input of ['admin', [], 42, true]) {
      const result = safeParseChatContext(input);
      expect(result.success).toBe(false);
      if (result.success) continue;
      expect(result.error.code).toBe('invalid_request');
      expect(result.error.detail).toBe('context must be an object.');
      expect(result.error.errors).toEqual([{ path: 'context', message: 'Expected an object' }]);
    }
    const flag = safeParseChatContext({ canRefundOrders: 'yes' });
    expect(flag.success || flag.error.errors).toEqual([
      { path: 'context.canRefundOrders', message: 'Capability flags must be booleans' },
    ]);
    expect(() => parseChatContext({ userEmail: 'nope' })).toThrow(
      expect.objectContaining({ code: 'invalid_request', detail: 'The chat context is invalid.' }),
    );
  });

  it('takes a whole address only: the email pattern is anchored at both ends', () => {
    for (const userEmail of ['a@b@example.com', 'two words@example.com', 'rep@example.com extra', '@example.com'])
      expect(safeParseChatContext({ userEmail }).success, userEmail).toBe(false);
    const refused = safeParseChatContext({ userEmail: 'nope', projectKey: '../etc' });
    expect(refused.success || refused.error.errors).toEqual([
      { path: 'context.userEmail', message: 'Expected an email address' },
      { path: 'context.projectKey', message: 'Expected a project key' },
    ]);
  });

  it('trims the role and the project key', () => {
    expect(parseChatContext({ userRole: ' agent ', projectKey: ' acme-b2c ' })).toMatchObject({
      userRole: 'agent',
      projectKey: 'acme-b2c',
    });
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
    expect(
      Object.keys(resolveCapabilities({ canRefundOrders: true, canHack: true }, builtinCapabilities)).sort(),
    ).toEqual(Object.keys(builtinCapabilities).sort());
  });
});
