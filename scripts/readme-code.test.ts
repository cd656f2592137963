// Every TypeScript block in every README is a program that compiles against the packages as built,
// or is marked a fragment (```ts fragment: it continues a block before it, or stands for a line of a
// larger program). A renamed option or a missing import in the docs fails here, not in a user's editor.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
// Inside the repository, so that the blocks' imports resolve to its packages (their built types).
const folder = `${root}node_modules/.cache/readme-blocks/`;

interface Block {
  file: string;
  line: number;
  fragment: boolean;
  code: string;
}

function blocksOf(file: string): Block[] {
  const text = readFileSync(`${root}${file}`, 'utf8');
  const blocks: Block[] = [];
  for (const match of text.matchAll(/^```(?:ts|tsx|typescript)( fragment)?[^\n]*\n([\s\S]*?)^```/gm)) {
    blocks.push({
      file,
      line: text.slice(0, match.index).split('\n').length,
      fragment: match[1] !== undefined,
      code: match[2]!,
    });
  }
  return blocks;
}

const readmes = execFileSync('git', ['ls-files', '*.md'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file !== '' && !file.startsWith('.changeset/') && !file.endsWith('CHANGELOG.md'));
const blocks = readmes.flatMap(blocksOf);

describe('README code', () => {
  it('finds the blocks, and most are whole programs', () => {
    expect(blocks.length).toBeGreaterThan(20);
    expect(blocks.filter((block) => !block.fragment).length).toBeGreaterThanOrEqual(blocks.length / 2);
  });

  it('compiles every block not marked a fragment, strictly, against the built packages', () => {
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder, { recursive: true });
    const programs = blocks.filter((block) => !block.fragment);
    const names = programs.map((block, index) => {
      const name = `${folder}block-${index}.${/<[A-Za-z]/.test(block.code) ? 'tsx' : 'ts'}`;
      writeFileSync(name, block.code);
      return name;
    });
    const program = ts.createProgram(names, {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2024,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      moduleDetection: ts.ModuleDetectionKind.Force,
      jsx: ts.JsxEmit.ReactJSX,
      lib: ['lib.es2024.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
      types: ['node'],
      typeRoots: [`${root}node_modules/@types`],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const index = names.indexOf(diagnostic.file?.fileName ?? '');
      const where =
        index === -1 ? (diagnostic.file?.fileName ?? 'options') : `${programs[index]!.file}:${programs[index]!.line}`;
      const line =
        diagnostic.file && diagnostic.start !== undefined
          ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1
          : 0;
      return `${where} (+${line}): ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    });
    expect(problems.join('\n')).toBe('');
  }, 120_000);
});
