import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { loopbackOrigins } from '../../shared/environment.ts';
import { spawnExample, temporaryDataDir, type RunningExample } from '../../test-support/spawn-example.ts';

const serverFiles = {
  session: fileURLToPath(new URL('../../session-server/src/server.ts', import.meta.url)),
  chat: fileURLToPath(new URL('../../chat-server/src/server.ts', import.meta.url)),
  studio: fileURLToPath(new URL('../src/server.ts', import.meta.url)),
};

/** Debian's Chromium; the browser suites are reported as skipped where it is not installed. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);

/** Launches headless Chromium with the flags this machine needs (no sandbox as root, no background networking). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Collects a page's uncaught errors and console errors (not the HTTP errors a scenario causes) into `errors`. */
export function watchPageErrors(page: Page, errors: string[]): void {
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
}

/**
 * Chromium's virtual authenticator (the DevTools protocol's WebAuthn domain) for a page: a platform
 * authenticator with discoverable credentials and user verification, no hardware, answering at once.
 */
export async function addVirtualAuthenticator(
  context: BrowserContext,
  page: Page,
): Promise<{ devtools: CDPSession; authenticatorId: string }> {
  const devtools = await context.newCDPSession(page);
  await devtools.send('WebAuthn.enable');
  const { authenticatorId } = await devtools.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { devtools, authenticatorId };
}

/** A port that was free a moment ago (the services must know the studio's origin before it starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The three services as real processes on PGlite, as `npm start` runs them, with restartable ports. */
export interface Platform {
  studioUrl: string;
  session: RunningExample;
  chat: RunningExample;
  studio: RunningExample;
  /** Starts a killed service again on its port and data folder. */
  restart(name: 'session' | 'chat'): Promise<RunningExample>;
  close(): void;
}

/** Starts the platform; `chatEnv` goes to the chat service (its grant secret to the studio too), `otherEnv` to the session service and the studio; `studioPort` when a test must know the studio's origin first. */
export async function startPlatform(
  chatEnv: Record<string, string> = {},
  otherEnv: Record<string, string> = {},
  options: { studioPort?: number } = {},
): Promise<Platform> {
  const cleanups: Array<() => void> = [];
  const onCleanup = (cleanup: () => void) => void cleanups.push(cleanup);
  const [studioPort, sessionPort, chatPort] = [
    options.studioPort ?? (await freePort()),
    await freePort(),
    await freePort(),
  ];
  const studioUrl = `http://localhost:${studioPort}`;
  // The services' development default on the studio's free port: every loopback name of it.
  const allowedOrigins = loopbackOrigins(studioPort).join(',');
  const env = {
    session: {
      PORT: String(sessionPort),
      DATA_DIR: temporaryDataDir(onCleanup),
      ALLOWED_ORIGINS: allowedOrigins,
      TRUSTED_PROXIES: '127.0.0.1',
      ...otherEnv,
    },
    chat: {
      PORT: String(chatPort),
      DATA_DIR: temporaryDataDir(onCleanup),
      ALLOWED_ORIGINS: allowedOrigins,
      ...chatEnv,
    },
  };
  const start = (name: 'session' | 'chat') => spawnExample(serverFiles[name], env[name], onCleanup);
  const close = () => cleanups.reverse().forEach((cleanup) => cleanup());
  let started;
  try {
    const [session, chat] = await Promise.all([start('session'), start('chat')]);
    const studio = await spawnExample(
      serverFiles.studio,
      {
        PORT: String(studioPort),
        SESSION_SERVICE_URL: `http://127.0.0.1:${sessionPort}`,
        CHAT_SERVICE_URL: `http://localhost:${chatPort}`,
        CHAT_CONTEXT_SECRET: chatEnv.CHAT_CONTEXT_SECRET,
        ...otherEnv,
      },
      onCleanup,
    );
    started = { session, chat, studio };
  } catch (error) {
    // One service that does not start leaves none behind: the others started are stopped too.
    close();
    throw error;
  }
  const { session, chat, studio } = started;
  const platform: Platform = {
    studioUrl,
    session,
    chat,
    studio,
    restart: async (name) => (platform[name] = await start(name)),
    close,
  };
  return platform;
}

/** Signs in through the page's form, and waits for the workspace (its role badge). */
export async function signIn(page: Page, studioUrl: string, email: string, password: string): Promise<void> {
  await page.goto(studioUrl);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByTestId('role').waitFor();
}
