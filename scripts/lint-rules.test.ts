import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

// Proof that the architecture rules of eslint.config.js bite: each case lints one line as if it
// were the named file (which need not exist) and compares the rules that fire.
const root = fileURLToPath(new URL('..', import.meta.url));

const expressImport = "import express from 'express';";
const nodeHttpImport = "import { createServer } from 'node:http';";
const consoleCall = "console.log('hello');";
/** A function of `lines` lines (its signature, `lines - 2` statements and its closing brace). */
const functionOfLines = (lines: number) =>
  [
    'export function long(): number {',
    '  let total = 0;',
    ...Array.from({ length: lines - 4 }, (_, index) => `  total += ${index};`),
    '  return total;',
    '}',
  ].join('\n');

const cases: Array<{ where: string; code: string; fires: string[] }> = [
  // Core and the stores stay free of Express and node:http; their tests may use what they need.
  { where: 'packages/core/src/x.ts', code: expressImport, fires: ['no-restricted-imports'] },
  { where: 'packages/core/src/chat/x.ts', code: nodeHttpImport, fires: ['no-restricted-imports'] },
  { where: 'packages/core/src/x.ts', code: "import cors from 'cors';", fires: ['no-restricted-imports'] },
  { where: 'packages/core/src/x.test.ts', code: nodeHttpImport, fires: [] },
  { where: 'packages/core/src/x.test.ts', code: expressImport, fires: ['no-restricted-imports'] },
  {
    where: 'packages/postgres/src/x.ts',
    code: "import { request } from 'node:https';",
    fires: ['no-restricted-imports'],
  },
  { where: 'packages/redis/src/x.ts', code: expressImport, fires: ['no-restricted-imports'] },
  { where: 'packages/postgres/src/x.test.ts', code: nodeHttpImport, fires: [] },
  { where: 'packages/session-express/src/x.ts', code: expressImport, fires: [] },
  { where: 'packages/chat-express/src/x.test.ts', code: expressImport, fires: [] },
  // Core depends on nothing of ours; the others use core's published entries.
  { where: 'packages/core/src/x.ts', code: "import { x } from '@deskpilot/redis';", fires: ['no-restricted-imports'] },
  {
    where: 'packages/core/src/x.test.ts',
    code: "import { x } from '@deskpilot/core';",
    fires: ['no-restricted-imports'],
  },
  // Core's folders in layers: lower ones only (a planted upward import fires), tests exempt.
  {
    where: 'packages/core/src/chat/tools/x.ts',
    code: "import { x } from '../../testing/fake-clock.js';",
    fires: ['deskpilot/core-layers'],
  },
  {
    where: 'packages/core/src/session/x.ts',
    code: "import { x } from '../chat/handler/create-chat-handler.js';",
    fires: ['deskpilot/core-layers'],
  },
  {
    where: 'packages/core/src/session/x.ts',
    code: "import type { x } from '../team/team-api.js';",
    fires: ['deskpilot/core-layers'],
  },
  {
    where: 'packages/core/src/events/x.ts',
    code: "export { x } from '../chat/chat-event.js';",
    fires: ['deskpilot/core-layers'],
  },
  {
    where: 'packages/core/src/audit/x.ts',
    code: "import { x } from '../http/http-request.js';",
    fires: ['deskpilot/core-layers'],
  },
  { where: 'packages/core/src/chat/x.ts', code: "import { x } from '../session/session.js';", fires: [] },
  { where: 'packages/core/src/chat/handler/x.ts', code: "import { x } from './chat-routes.js';", fires: [] },
  {
    where: 'packages/core/src/session/x.ts',
    code: "import { x } from '../index.js';",
    fires: ['deskpilot/core-layers'],
  },
  {
    where: 'packages/core/src/newfolder/x.ts',
    code: "import { x } from '../errors/deskpilot-error.js';",
    fires: ['deskpilot/core-layers'],
  },
  { where: 'packages/core/src/session/x.test.ts', code: "import { x } from '../chat/chat-event.js';", fires: [] },
  { where: 'packages/core/src/x.ts', code: "import { x } from './chat/chat-event.js';", fires: [] },
  { where: 'packages/redis/src/x.ts', code: "import { x } from '@deskpilot/core';", fires: [] },
  { where: 'packages/postgres/src/x.test.ts', code: "import { x } from '@deskpilot/core/testing';", fires: [] },
  // No package reaches into another's sources or files.
  {
    where: 'packages/redis/src/x.ts',
    code: "import { x } from '../../core/src/index.js';",
    fires: ['no-restricted-imports'],
  },
  {
    where: 'packages/session-express/src/x.test.ts',
    code: "import { x } from '../../core/src/http/node-http.js';",
    fires: ['no-restricted-imports'],
  },
  {
    where: 'packages/chat-express/src/x.ts',
    code: "import { x } from '@deskpilot/core/src/index.js';",
    fires: ['no-restricted-imports'],
  },
  // Examples, bench and scripts import published entries only.
  {
    where: 'examples/studio/src/x.ts',
    code: "import { x } from '../../../packages/core/src/index.js';",
    fires: ['no-restricted-imports'],
  },
  {
    where: 'examples/chat-server/test/x.test.ts',
    code: "import { x } from '../../../packages/core/dist/index.js';",
    fires: ['no-restricted-imports'],
  },
  { where: 'bench/x.ts', code: "import { x } from '@deskpilot/core/dist/index.js';", fires: ['no-restricted-imports'] },
  {
    where: 'scripts/x.ts',
    code: "import { x } from '@deskpilot/core/chat/chat-store.js';",
    fires: ['no-restricted-imports'],
  },
  { where: 'examples/studio/src/x.ts', code: "import { x } from '@deskpilot/core';", fires: [] },
  { where: 'examples/studio/test/x.test.ts', code: "import { x } from '@deskpilot/core/testing';", fires: [] },
  { where: 'examples/studio/test/x.test.ts', code: "import { x } from '../src/app.ts';", fires: [] },
  {
    where: 'examples/chat-server/test/x.test.ts',
    code: "import { x } from '../../test-support/spawn-example.ts';",
    fires: [],
  },
  { where: 'bench/x.ts', code: expressImport, fires: [] },
  // Packages report through a logger; tests, examples and bench may print.
  { where: 'packages/core/src/x.ts', code: consoleCall, fires: ['no-console'] },
  { where: 'packages/redis/src/x.ts', code: consoleCall, fires: ['no-console'] },
  { where: 'packages/core/src/x.test.ts', code: consoleCall, fires: [] },
  { where: 'examples/studio/src/x.ts', code: consoleCall, fires: [] },
  { where: 'bench/x.ts', code: consoleCall, fires: [] },
];

// No function in a package's sources is longer than 100 lines; tests and conformance suites are exempt.
const functionLengthCases: Array<{ where: string; lines: number; fires: string[] }> = [
  { where: 'packages/core/src/x.ts', lines: 110, fires: ['max-lines-per-function'] },
  { where: 'packages/redis/src/x.ts', lines: 110, fires: ['max-lines-per-function'] },
  { where: 'packages/core/src/x.ts', lines: 100, fires: [] },
  { where: 'packages/core/src/x.test.ts', lines: 110, fires: [] },
  { where: 'packages/core/src/testing/x.ts', lines: 110, fires: [] },
];

describe('eslint.config.js', () => {
  let eslint: ESLint;
  beforeAll(() => {
    eslint = new ESLint({ cwd: root });
  });

  it.each(cases)('$where: `$code` fires $fires', async ({ where, code, fires }) => {
    const [result] = await eslint.lintText(`${code}\n`, { filePath: `${root}${where}` });
    expect(result!.messages.map((message) => message.ruleId)).toEqual(fires);
    for (const message of result!.messages) expect(message.severity).toBe(2);
  });

  it.each(functionLengthCases)('$where: a function of $lines lines fires $fires', async ({ where, lines, fires }) => {
    const code = functionOfLines(lines);
    expect(code.split('\n')).toHaveLength(lines);
    const [result] = await eslint.lintText(`${code}\n`, { filePath: `${root}${where}` });
    expect(result!.messages.map((message) => message.ruleId)).toEqual(fires);
    for (const message of result!.messages) expect(message.severity).toBe(2);
  });
});
