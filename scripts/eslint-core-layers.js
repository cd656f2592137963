// The lint rule that keeps core's folders in layers (ARCHITECTURE.md, "Layers"): a folder of
// `packages/core/src` imports only folders of lower layers, never one of its own layer or above, and
// never an entry file. A new folder has no layer until it is given one here. Tests and test support
// may import anything.
import path from 'node:path';

/** Core's top-level folders, lowest layer first. */
export const coreLayers = [
  // Vocabulary: nothing of ours below them.
  ['errors', 'encoding', 'capabilities', 'logging', 'limiter'],
  ['validation', 'telemetry', 'events'],
  ['http', 'audit'],
  // Routes declared once, and what a host mounts beside the handlers.
  ['routes', 'health', 'node'],
  // The session kernel, then what builds on it.
  ['session'],
  ['team', 'recovery', 'proxy', 'step-up'],
  ['chat'],
  // What composes everything: demo data, SQL rows, the documents; then the conformance suites and test kits.
  ['demo', 'storage', 'openapi'],
  ['testing'],
];

const layerOf = new Map(coreLayers.flatMap((folders, layer) => folders.map((folder) => [folder, layer])));
const coreSource = `${path.sep}packages${path.sep}core${path.sep}src${path.sep}`;

/** The top-level folder of a file under core's sources ('' for an entry file), or null outside them. */
function folderOf(file) {
  const at = file.indexOf(coreSource);
  if (at === -1) return null;
  const rest = file.slice(at + coreSource.length).split(path.sep);
  return rest.length === 1 ? '' : rest[0];
}

/** @type {import('eslint').Rule.RuleModule} */
const coreLayersRule = {
  meta: {
    type: 'problem',
    docs: { description: "Core's folders import only folders of lower layers" },
    schema: [],
    messages: {
      upward: '{{from}}/ may not import {{to}}/: {{to}} is not below it (layers: scripts/eslint-core-layers.js).',
      entry: '{{from}}/ may not import an entry file ({{to}}): entries sit above every folder.',
      unplaced: 'The folder {{folder}}/ has no layer: place it in scripts/eslint-core-layers.js.',
    },
  },
  create(context) {
    const file = context.filename;
    const from = folderOf(file);
    if (from === null || from === '' || /\.test(-support)?\.ts$/.test(file)) return {};
    const check = (node) => {
      const source = node.source?.value;
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const to = folderOf(path.resolve(path.dirname(file), source));
      if (to === null || to === from) return;
      if (!layerOf.has(from)) return context.report({ node, messageId: 'unplaced', data: { folder: from } });
      if (to === '') return context.report({ node, messageId: 'entry', data: { from, to: source } });
      if (!layerOf.has(to)) return context.report({ node, messageId: 'unplaced', data: { folder: to } });
      if (layerOf.get(to) >= layerOf.get(from)) context.report({ node, messageId: 'upward', data: { from, to } });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

export default { rules: { 'core-layers': coreLayersRule } };
