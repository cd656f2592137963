import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The recipes' table of glue lines, checked against the files: "Lines: non-blank lines of the glue
// files, comments excluded, imports included".
const recipes = new URL('../examples/recipes/', import.meta.url);
const readme = readFileSync(new URL('README.md', recipes), 'utf8');

/** Non-blank lines of a TypeScript file, comments left out. */
function glueLines(path: string): number {
  const source = readFileSync(new URL(path, recipes), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  return source.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('//')).length;
}

/** Each row's glue files, one list per addend of its Lines cell, and the cell's numbers. */
function rows() {
  return [...readme.matchAll(/^\| ([^|]+) \| ([^|]+) \| ([\d +]+) \|/gm)].map(([, stack, glue, lines]) => {
    const links = [...glue!.matchAll(/\]\(([\w/.-]+\.tsx?)\)/g)].map(([, path]) => [path!]);
    // A folder linked with its files named beside it (Next.js): their lines add up to one number.
    const folder = /\]\(([\w-]+)\)/.exec(glue!)?.[1];
    const named = [...glue!.matchAll(/`([\w/.[\]-]+\.tsx?)`/g)].map(([, path]) => `${folder}/${path}`);
    return { stack: stack!, files: folder && named.length > 0 ? [named] : links, lines: lines!.split('+').map(Number) };
  });
}

describe("the recipes' README", () => {
  it('gives each glue its lines as counted', () => {
    const table = rows();
    expect(table.length).toBeGreaterThanOrEqual(5);
    for (const row of table)
      expect(
        row.files.map((files) => files.reduce((sum, file) => sum + glueLines(file), 0)),
        row.stack,
      ).toEqual(row.lines);
  });
});
