/** One error as a line: its name (unless plain `Error`), message and code; a non-Error by its fields. */
function describeOne(error: unknown): string {
  if (error instanceof Error) {
    const { code } = error as { code?: unknown };
    const name = error.name && error.name !== 'Error' ? `${error.name}: ` : '';
    return `${name}${error.message || '(no message)'}${typeof code === 'string' && !error.message.includes(code) ? ` [${code}]` : ''}`;
  }
  if (typeof error !== 'object' || error === null) return String(error);
  // Emscripten (PGlite) throws plain objects such as { name: 'ErrnoError', errno: 51 }.
  const fields = error as Record<string, unknown>;
  const name = typeof fields.name === 'string' ? fields.name : (error.constructor?.name ?? 'Object');
  const message = typeof fields.message === 'string' ? `: ${fields.message}` : '';
  const details = ['code', 'errno']
    .filter((key) => typeof fields[key] === 'string' || typeof fields[key] === 'number')
    .map((key) => `${key} ${String(fields[key])}`);
  if (message || details.length > 0) return `${name}${message}${details.length > 0 ? ` (${details.join(', ')})` : ''}`;
  try {
    return `${name} ${JSON.stringify(error).slice(0, 300)}`;
  } catch {
    return name;
  }
}

/**
 * Describes anything thrown for a log line: the message and each `cause` under it, one per line;
 * never `[object Object]`, also for non-Error throwables. Meant for operators (start-up failures,
 * logs), never for clients: a message may name paths and hosts.
 *
 * @example
 * createApp(config).catch((error) => {
 *   console.error(`cannot start: ${describeError(error)}`);
 *   process.exit(1);
 * });
 */
export function describeError(error: unknown): string {
  const lines: string[] = [];
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (lines.length < 8 && !seen.has(current)) {
    seen.add(current);
    lines.push(describeOne(current));
    const cause = typeof current === 'object' && current !== null ? (current as { cause?: unknown }).cause : undefined;
    if (cause === undefined) break;
    current = cause;
  }
  return lines.join('\n  caused by: ');
}
