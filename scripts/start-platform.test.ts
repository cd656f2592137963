// `npm start`'s launcher as an operator meets it: Ctrl+C in a terminal sends SIGINT to the whole
// process group — the launcher, which runs the three servers in its one process. A turn running at
// that moment must finish (or be recorded `aborted`), and nothing be lost after a restart.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readChunks, readHistory, userMessage } from '../examples/test-support/chat-client.ts';
import { temporaryDataDir } from '../examples/test-support/spawn-example.ts';
import { freePort } from '../examples/studio/test/platform.ts';

const launcher = fileURLToPath(new URL('./start-platform.ts', import.meta.url));
const compileCache = new URL('../examples/shared/compile-cache.mjs', import.meta.url).href;

/** The launcher in a process group of its own (as a terminal starts it); resolves once it says the platform is up. */
async function startPlatform(env: Record<string, string>): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ['--import', compileCache, launcher], {
    env: { ...process.env, DATABASE_URL: '', REDIS_URL: '', LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  // Whatever happens, nothing of the group outlives the test.
  onTestFinished(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  });
  let output = '';
  for (const stream of [child.stdout!, child.stderr!])
    stream.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => output.includes('Deskpilot Studio is up') && resolve());
    child.once('exit', (code) => reject(new Error(`the platform exited with ${code}: ${output}`)));
  });
  return { child, output: () => output };
}

describe('npm start (scripts/start-platform.ts)', () => {
  it('on Ctrl+C (SIGINT to the whole process group) lets a running turn finish, saves it, and exits 0', async () => {
    const dataDir = temporaryDataDir();
    const [session, chat, studio, knowledgeBase] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const env = {
      DATA_DIR: dataDir,
      SESSION_PORT: String(session),
      CHAT_PORT: String(chat),
      STUDIO_PORT: String(studio),
      KNOWLEDGE_BASE_PORT: String(knowledgeBase),
      COOKIE_SECURE: 'false',
      // The platform signs chat grants with a secret of its run: this one outlives the restart below.
      CHAT_CONTEXT_SECRET: 'start-platform-test-grant-secret-0123456789',
    };
    const platform = await startPlatform({ ...env, DEMO_MODEL_DELAY_MS: '150', SHUTDOWN_GRACE_MS: '20000' });
    const chatUrl = `http://127.0.0.1:${chat}`;
    // A signed-in user's grant, as the studio signs it: on one SQLite file the chat checks its session.
    const studioUrl = `http://localhost:${studio}`;
    const signedIn = await fetch(`${studioUrl}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: studioUrl },
      body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
    });
    expect(signedIn.status).toBe(201);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const { context } = (await (await fetch(`${studioUrl}/studio/chat-context`, { headers: { cookie } })).json()) as {
      context: { grant: string };
    };
    const body = { sessionId: crypto.randomUUID(), context };

    const response = await fetch(`${chatUrl}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, messages: [userMessage('Show order ORD-1001')] }),
    });
    expect(response.status).toBe(200);
    const chunks = readChunks(response);
    // The answer is streaming (the demo model waits 150 ms between parts): Ctrl+C now.
    await new Promise((resolve) => setTimeout(resolve, 400));
    process.kill(-platform.child.pid!, 'SIGINT');
    const received = await chunks;
    const [code] = (await once(platform.child, 'exit')) as [number | null];

    expect(received.at(-1)!.type).toBe('finish');
    expect(received.filter((chunk) => chunk.type === 'error')).toEqual([]);
    expect(code).toBe(0);
    expect(platform.output()).not.toMatch(/again: exiting now/);
    // One process runs the three servers: each drained on the one signal.
    for (const service of ['session-server', 'chat-server', 'studio'])
      expect(platform.output()).toContain(`"service":"${service}","msg":"SIGINT: closing`);

    // After a restart the turn is there, answered.
    const restarted = await startPlatform(env);
    const history = await readHistory(chatUrl, body);
    expect(history.lastTurnStatus).toBe('complete');
    expect(history.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    process.kill(-restarted.child.pid!, 'SIGINT');
    expect((await once(restarted.child, 'exit'))[0]).toBe(0);
  }, 90_000);

  it('stops and exits 0 when the same Ctrl+C also ended the reader of its output (npm start | tee run.log)', async () => {
    const [session, chat, studio, knowledgeBase] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const platform = await startPlatform({
      DATA_DIR: temporaryDataDir(),
      SESSION_PORT: String(session),
      CHAT_PORT: String(chat),
      STUDIO_PORT: String(studio),
      KNOWLEDGE_BASE_PORT: String(knowledgeBase),
    });
    // The reader goes first: every line the servers write while they stop meets a broken pipe.
    platform.child.stdout!.destroy();
    platform.child.stderr!.destroy();
    process.kill(-platform.child.pid!, 'SIGINT');
    const [code] = (await once(platform.child, 'exit')) as [number | null];
    expect(code).toBe(0);
  }, 60_000);

  it('refuses a port variable that is not a port, naming it', async () => {
    const child = spawn(process.execPath, [launcher], {
      env: { ...process.env, CHAT_PORT: 'eighty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onTestFinished(() => void child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(2);
    expect(stderr).toContain('CHAT_PORT: not a port (1-65535)');
  });
});
