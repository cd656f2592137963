/** Whether every word of a free-text query occurs (case-insensitively) in one of the fields. */
export function matchesTextQuery(query: string | undefined, fields: ReadonlyArray<string | null>): boolean {
  const words = (query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const haystack = fields
    .filter((field) => field !== null)
    .join('\n')
    .toLowerCase();
  return words.every((word) => haystack.includes(word));
}

/** A caller's limit clamped to [1, max]; anything not a number becomes 1. */
export function clampLimit(limit: number, max = 100): number {
  return Number.isFinite(limit) ? Math.min(max, Math.max(1, Math.trunc(limit))) : 1;
}
