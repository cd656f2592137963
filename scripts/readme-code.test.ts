// Every TypeScript block in every README is a program that compiles against the packages as built,
// or is marked a fragment (```ts fragment: it continues a block before it, or stands for a line of a
// larger program). A renamed option or a missing import in the docs fails here, not in a user's editor.
// Every other block is checked for what it can be checked for: a shell block's npm scripts,
// workspaces, packages and files exist; JSON and YAML parse. `text` and `md` blocks show output and
// documents, not code; a block without a language is refused.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

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

/** Every fenced block of a file, with its language (empty when it has none). */
function fencedBlocks(file: string): Array<{ file: string; line: number; language: string; code: string }> {
  const text = readFileSync(`${root}${file}`, 'utf8');
  return [...text.matchAll(/^```([^\n]*)\n([\s\S]*?)^```/gm)].map((match) => ({
    file,
    line: text.slice(0, match.index).split('\n').length,
    language: match[1]!.trim().split(' ')[0]!,
    code: match[2]!,
  }));
}

const packageJson = (folder: string) =>
  JSON.parse(readFileSync(`${root}${folder === '' ? '' : `${folder}/`}package.json`, 'utf8')) as {
    name: string;
    scripts?: Record<string, string>;
    bin?: Record<string, string>;
    workspaces?: string[];
  };
const workspaces = packageJson('').workspaces!;
const publishedNames = new Set(workspaces.map((folder) => packageJson(folder).name));

/** What is wrong with one shell command of a README (null: nothing). */
function shellProblem(command: string): string | null {
  // Variables set for the command (`COOKIE_SECURE=false npm start`) change nothing checked here.
  const words = command
    .replace(/^(\w+=\S*\s+)+/, '')
    .split(/\s+/)
    .filter(Boolean);
  const [tool, verb, ...rest] = words;
  const option = (name: string) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined);
  if (tool === 'curl') return null;
  if (tool === 'npx') {
    if (verb === '-p') return null;
    if (verb === 'vitest') return existsSync(`${root}${rest[1]}`) ? null : `no ${rest[1]}`;
    if (verb === 'deskpilot-migrate' || verb === 'deskpilot-audit')
      return packageJson('packages/postgres').bin?.[verb] ? null : 'no such bin';
    return `unknown npx command ${verb}`;
  }
  if (tool !== 'npm') return `unknown command ${tool}`;
  const workspace = option('-w') ?? '';
  if (workspace !== '' && !workspaces.includes(workspace)) return `no workspace ${workspace}`;
  if (verb === 'install') {
    const unknown = rest.filter((name) => name.startsWith('@deskpilot/') && !publishedNames.has(name));
    return unknown.length === 0 ? null : `no package ${unknown.join(', ')}`;
  }
  const script = verb === 'run' ? rest.find((word, index) => !word.startsWith('-') && rest[index - 1] !== '-w') : verb;
  if (verb === 'exec') {
    const file = rest[rest.indexOf('node') + 1];
    return rest.includes('node') && existsSync(`${root}${workspace}/${file}`) ? null : `no ${workspace}/${file}`;
  }
  return script && packageJson(workspace).scripts?.[script]
    ? null
    : `no script ${script} in ${workspace || 'the root'}`;
}

describe('README blocks besides TypeScript', () => {
  const others = readmes.flatMap(fencedBlocks).filter((block) => !['ts', 'tsx', 'typescript'].includes(block.language));

  it('gives every block a language', () => {
    expect(others.filter((block) => block.language === '').map((block) => `${block.file}:${block.line}`)).toEqual([]);
    expect(others.filter((block) => block.language === 'sh').length).toBeGreaterThan(20);
  });

  it('names, in every shell block, npm scripts, workspaces, packages and files that exist', () => {
    const problems = others
      .filter((block) => block.language === 'sh')
      .flatMap((block) =>
        block.code
          // Quoted arguments (a JSON body over lines, say) are not commands.
          .replace(/'[^']*'/g, "''")
          .replace(/\\\n/g, ' ')
          .split('\n')
          .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
          .filter(Boolean)
          .flatMap((line) => line.split('&&').map((command) => command.trim()))
          .map((command) => [command, shellProblem(command)] as const)
          .filter(([, problem]) => problem !== null)
          .map(([command, problem]) => `${block.file}:${block.line} ${command}: ${problem}`),
      );
    expect(problems).toEqual([]);
  });

  it('parses every JSON and YAML block', () => {
    const problems = others.flatMap((block) => {
      try {
        // JSON, or JSON lines (a log sample): each line a document.
        if (block.language === 'json')
          for (const document of block.code.trim().startsWith('{"') ? block.code.trim().split('\n') : [block.code])
            JSON.parse(document);
        else if (block.language === 'yaml') parseYaml(block.code);
        else if (!['sh', 'text', 'md'].includes(block.language))
          return [`${block.file}:${block.line} ${block.language}`];
        return [];
      } catch (error) {
        return [`${block.file}:${block.line}: ${String(error)}`];
      }
    });
    expect(problems).toEqual([]);
  });
});
