import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openApiDirectory, openApiFiles, staleOpenApiFiles } from './openapi.ts';

describe('docs/openapi', () => {
  it('is what the handlers’ schemas generate (after changing a schema, run `node scripts/openapi.ts` and commit)', () => {
    expect(staleOpenApiFiles()).toEqual([]);
  });

  it('is caught stale when a schema changes without regenerating', () => {
    const copy = `${mkdtempSync(join(tmpdir(), 'deskpilot-openapi-'))}/`;
    onTestFinished(() => rmSync(copy, { recursive: true, force: true }));
    cpSync(openApiDirectory, copy, { recursive: true });
    expect(staleOpenApiFiles(copy)).toEqual([]);
    // What a schema change looks like in the committed file: the password limit moved.
    const session = readFileSync(`${copy}session.json`, 'utf8');
    writeFileSync(`${copy}session.json`, session.replace('"maxLength": 1024', '"maxLength": 2048'));
    expect(staleOpenApiFiles(copy)).toEqual(['session.json']);
    expect(openApiFiles().map((file) => file.name)).toEqual(['session.json', 'chat.json']);
  });
});
