// ES2024's `String.prototype.isWellFormed` (Node ≥ 20); the project's TypeScript lib is ES2023.
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * False for text no SQL row can hold as given: Postgres refuses NUL in `text` (an error, not a miss),
 * and drivers turn a lone surrogate into U+FFFD (which could then match another row). A store answers
 * a key like that "not found" without a query.
 */
export const canBeStored = (text: string): boolean => !text.includes('\u0000') && isWellFormed(text);
