// ES2024's `String.prototype.isWellFormed` (Node ≥ 20); the project's TypeScript lib is ES2023.
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * Why `text` is not valid text, or null when it is. Valid text is any sequence of Unicode scalar
 * values except U+0000: Postgres refuses NUL in `text` and `jsonb`, and a lone UTF-16 surrogate
 * cannot be encoded as UTF-8 at all (drivers silently turn it into U+FFFD, so an identity would
 * change on its way to storage).
 */
export function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'Must not contain NUL (U+0000)';
  if (!isWellFormed(text)) return 'Must not contain a lone surrogate (invalid Unicode)';
  return null;
}

/** True when `text` is valid text: no NUL and no lone surrogate (see {@link textProblem}). */
export function isValidText(text: string): boolean {
  return textProblem(text) === null;
}
