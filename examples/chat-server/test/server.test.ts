import { fileURLToPath } from 'node:url';
import { readChatStream } from '@deskpilot/core';
import { signChatGrant } from '@deskpilot/core/chat';
import { describe, expect, it } from 'vitest';
import { modelsFrom } from '../src/app.ts';
import { readConfig } from '../src/config.ts';
import { exitCode, runToExit, spawnExample } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
const ask = (url: string, text: string, extra: object = {}) =>
  fetch(`${url}/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'http://localhost:3000' },
    body: JSON.stringify({
      sessionId: crypto.randomUUID(),
      messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text }] }],
      context,
      ...extra,
    }),
  });

describe('reference chat server', () => {
  it('answers with the offline demo model when no provider key is set, labelled as such', async () => {
    const { child, url, output } = await spawnExample(serverFile, { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' });
    await expect.poll(output).toContain('offline demo model');
    // No CHAT_CONTEXT_SECRET: it trusts the body, as DESIGN says, and says so at start.
    expect(output()).toContain('identity and capability flags are taken from the request body');
    const response = await ask(url, 'show order ORD-1001');
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
    const chunks = [];
    for await (const chunk of readChatStream(response)) chunks.push(chunk);
    expect(chunks[0]).toMatchObject({ type: 'start', messageMetadata: { model: 'deskpilot:offline-demo' } });
    expect(chunks.filter((chunk) => chunk.type === 'tool-output-available')).toHaveLength(2);
    expect(chunks.at(-1)).toMatchObject({ type: 'finish' });

    const unconfigured = await ask(url, 'hi', { provider: 'openai' });
    expect(unconfigured.status).toBe(400);
    expect((await unconfigured.json()).code).toBe('provider_unavailable');

    child.kill('SIGTERM');
    expect(await exitCode(child)).toBe(0);
  });

  it('requires signed grants when CHAT_CONTEXT_SECRET is set', async () => {
    const secret = 'reference-server-context-secret-0123456789';
    const { url, output } = await spawnExample(serverFile, { CHAT_CONTEXT_SECRET: secret });
    expect(output()).not.toContain('taken from the request body');
    expect((await ask(url, 'hi')).status).toBe(401);
    const grant = await signChatGrant({ ...context, userRole: 'agent', businessType: 'b2c', capabilities: {} }, secret);
    const granted = await ask(url, 'hi', { context: { grant } });
    expect(granted.status).toBe(200);
    await granted.body?.cancel();
  });

  it('refuses a bad configuration with a readable message that never prints the secret', async () => {
    const { code, stderr } = await runToExit(serverFile, { STEP_BUDGET: '0', CHAT_CONTEXT_SECRET: 'too-short-secret' });
    expect(code).toBe(2);
    expect(stderr).toContain('STEP_BUDGET');
    expect(stderr).toContain('CHAT_CONTEXT_SECRET');
    expect(stderr).not.toContain('too-short-secret');
  });

  it('checks the whole environment at once: allow-list, proxies and database URL named together, exit 2, nothing opened', async () => {
    const { code, stderr } = await runToExit(serverFile, {
      PORT: '0',
      ALLOWED_ORIGINS: 'https://studio.example.com/app',
      TRUSTED_PROXIES: '127.0.0.1, proxy.internal',
      DATABASE_URL: 'not a url with hunter2',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('[chat-server] Invalid configuration (3 problems)');
    expect(stderr).toContain('ALLOWED_ORIGINS (entry 1): not an origin');
    expect(stderr).toContain('TRUSTED_PROXIES (entry 2): not an IP address or CIDR range');
    expect(stderr).toContain('DATABASE_URL: not a postgres:// or postgresql:// URL');
    expect(stderr).not.toContain('hunter2');
    expect(stderr).not.toContain('cannot start');
  });

  it('reads STEP_UP_POLICY as step-up rules (every cancel and refunds above 100.00 by default), and names a malformed one', () => {
    expect(readConfig({}).STEP_UP_POLICY).toEqual({ cancelOrder: true, refundOrder: { amountAbove: 10_000 } });
    expect(readConfig({ STEP_UP_POLICY: ' refundOrder>500 , createTicket' }).STEP_UP_POLICY).toEqual({
      refundOrder: { amountAbove: 500 },
      createTicket: true,
    });
    for (const malformed of ['refundOrder>', 'refundOrder>1.5', ',', 'refund order'])
      expect(() => readConfig({ STEP_UP_POLICY: malformed })).toThrow(/STEP_UP_POLICY: expected tool names/);
    expect(() => readConfig({ STEP_UP_SECRET: 'short' })).toThrow(/STEP_UP_SECRET: must be at least 32 characters/);
  });

  it('builds the provider models from the keys, the first configured one answering by default', () => {
    const models = modelsFrom(readConfig({ OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'ak-test' }));
    expect(models.openai?.provider).toMatch(/^openai/);
    expect(models.anthropic?.provider).toMatch(/^anthropic/);
    expect(models.fallback).toBe(models.openai);
    expect(modelsFrom(readConfig({ ANTHROPIC_API_KEY: 'ak-test' })).label).toMatch(/^anthropic.*claude-sonnet-4-6$/);
    expect(modelsFrom(readConfig({})).label).toBe('deskpilot:offline-demo');
  });

  describe('origins whose pages may call /chat', () => {
    const preflight = (url: string, origin: string) =>
      fetch(`${url}/chat`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
    const allowedOrigin = async (url: string, origin: string) => {
      const response = await preflight(url, origin);
      await response.body?.cancel();
      return response.status === 204 ? response.headers.get('access-control-allow-origin') : null;
    };

    it('by default, the studio on any loopback spelling of its port (what it prints is 127.0.0.1), and nothing else', async () => {
      const { url } = await spawnExample(serverFile, { ALLOWED_ORIGINS: '' });
      for (const origin of ['http://localhost:3000', 'http://127.0.0.1:3000', 'http://[::1]:3000']) {
        expect({ origin, allowed: await allowedOrigin(url, origin) }).toEqual({ origin, allowed: origin });
      }
      for (const origin of [
        'http://127.0.0.1:3001',
        'http://[::1]:3001',
        'https://127.0.0.1:3000',
        'http://192.168.1.20:3000',
      ]) {
        expect({ origin, allowed: await allowedOrigin(url, origin) }).toEqual({ origin, allowed: null });
      }
      // The request itself, from a page on 127.0.0.1: readable by that page.
      const response = await fetch(`${url}/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://127.0.0.1:3000' },
        body: JSON.stringify({
          sessionId: crypto.randomUUID(),
          messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
          context,
        }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:3000');
      await response.body?.cancel();
    });

    it('an explicit ALLOWED_ORIGINS exactly as given, no loopback added', async () => {
      const { url } = await spawnExample(serverFile, { ALLOWED_ORIGINS: 'https://studio.example.com' });
      expect(await allowedOrigin(url, 'https://studio.example.com')).toBe('https://studio.example.com');
      expect(await allowedOrigin(url, 'http://localhost:3000')).toBeNull();
      expect(await allowedOrigin(url, 'http://127.0.0.1:3000')).toBeNull();
    });
  });
});
