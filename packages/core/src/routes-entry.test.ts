import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** Every module `@deskpilot/core/routes` loads (relative imports, types left out), and every package it imports. */
function importGraph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    for (const [, typeOnly, specifier] of source.matchAll(/^(?:import|export)( type)?[^'";]*?from '([^']+)'/gm)) {
      if (typeOnly) continue;
      if (specifier!.startsWith('.')) visit(resolve(dirname(file), specifier!.replace(/\.js$/, '.ts')));
      else packages.add(specifier!);
    }
  };
  visit(entry);
  return { files: [...files], packages: [...packages].sort() };
}

const foldersOf = (files: string[]) => [...new Set(files.map((file) => file.split('/src/')[1]!.split('/')[0]!))].sort();
/** Handlers, served routes and stores among them (the entry file itself aside). */
const handlersOrStores = (files: string[]) =>
  files.filter((file) => /\/src\/[\w-]+\/.*(create-|-routes\.ts|-store\.ts)/.test(file));

describe('the declarations entries', () => {
  it('@deskpilot/core/routes is light enough for a browser and a session-only process: zod/mini, no handler, no store, no Node built-in', () => {
    const { files, packages } = importGraph(fileURLToPath(new URL('./routes.ts', import.meta.url)));
    // The step-up binding's pattern comes with the proof's module: two browser-safe hashing libraries.
    expect(packages).toEqual(['@noble/hashes/sha2.js', '@noble/hashes/utils.js', 'jose/base64url', 'zod/mini']);
    expect(foldersOf(files)).toEqual(['recovery', 'routes', 'routes.ts', 'session', 'step-up', 'team', 'validation']);
    expect(handlersOrStores(files)).toEqual([]);
  });

  it('@deskpilot/core/chat-routes: the chat declarations on classic zod, no handler, no store, no Node built-in', () => {
    const { files, packages } = importGraph(fileURLToPath(new URL('./chat-routes.ts', import.meta.url)));
    expect(packages).toEqual(['zod']);
    expect(foldersOf(files)).toEqual(['chat', 'chat-routes.ts', 'routes', 'validation']);
    expect(handlersOrStores(files)).toEqual([]);
  });
});
