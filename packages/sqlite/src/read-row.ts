/** One row as node:sqlite returns it. */
export type Row = Record<string, unknown>;

// ES2024's `String.prototype.isWellFormed` (Node ≥ 20); the project's TypeScript lib is ES2023.
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * False for text no row can hold as given: SQLite stores UTF-8, so a lone surrogate becomes U+FFFD on
 * the way in — and could then match another row. Such a key is answered "not found" without a query.
 */
export const canBeStored = (text: string) => isWellFormed(text);

/** JSON columns are text in SQLite: the shared row readers parse them. */
export const jsonAsText = { jsonAsText: true } as const;
