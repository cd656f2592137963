// `node --import <this file>`: prints `MODULE <package>` to stderr the first time a package under
// node_modules is resolved — by `import` or by `require` (synchronous hooks see both) — so a test can
// list the packages a process loaded; and `MODULE zod/classic` once zod's classic API is (not its
// mini one).
import { registerHooks } from 'node:module';

const seen = new Set();

function note(name) {
  if (seen.has(name)) return;
  seen.add(name);
  process.stderr.write(`MODULE ${name}\n`);
}

registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(result.url);
    if (match) note(match[1]);
    if (/node_modules\/zod\/v4\/classic\//.test(result.url)) note('zod/classic');
    return result;
  },
});
