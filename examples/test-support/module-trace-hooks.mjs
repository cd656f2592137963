// Module hooks (registered by module-trace.mjs): prints `MODULE <package>` to stderr the first time a
// package under node_modules is resolved, so a test can list the packages a process loaded.
const seen = new Set();

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(result.url);
  if (match && !seen.has(match[1])) {
    seen.add(match[1]);
    process.stderr.write(`MODULE ${match[1]}\n`);
  }
  return result;
}
