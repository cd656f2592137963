/** What {@link serializeBoundedJson} wrote: the JSON, and whether it is the whole value. */
export interface BoundedJson {
  /** JSON text; when `complete` is false, a prefix of it (not valid JSON on its own). */
  json: string;
  complete: boolean;
}

type Task = { text: string } | { value: unknown; leave?: object };

const circular = '"[circular]"';

/**
 * Serialises any value as JSON the way `JSON.stringify` does (`toJSON`, skipped `undefined` and
 * functions, `null` for non-finite numbers), but iteratively and within a budget: it stops once it has
 * written more than `maxChars` characters, so a value nested a million levels deep, a cyclic one or a
 * huge one costs no more than the budget. Cycles are written as `"[circular]"`, BigInts as strings,
 * and a value whose getters or `toJSON` throw as `null`.
 */
export function serializeBoundedJson(value: unknown, maxChars: number): BoundedJson {
  const parts: string[] = [];
  let length = 0;
  // Containers on the path from the root to the value being written: seeing one again is a cycle.
  const open = new Set<object>();
  const tasks: Task[] = [{ value }];
  const write = (text: string) => {
    parts.push(text);
    length += text.length;
  };
  while (tasks.length > 0) {
    if (length > maxChars) return { json: parts.join(''), complete: false };
    const task = tasks.pop()!;
    if ('text' in task) {
      write(task.text);
      continue;
    }
    if (task.leave) {
      open.delete(task.leave);
      continue;
    }
    const item = toJsonValue(task.value);
    if (typeof item === 'string') write(JSON.stringify(item));
    else if (typeof item === 'number') write(Number.isFinite(item) ? String(item) : 'null');
    else if (typeof item === 'boolean') write(String(item));
    else if (typeof item === 'bigint') write(JSON.stringify(String(item)));
    else if (item === null || typeof item !== 'object') write('null');
    else if (open.has(item)) write(circular);
    else {
      open.add(item);
      tasks.push({ value: undefined, leave: item });
      // Each entry writes at least one character: more than the budget left can never be written.
      const entries = readEntries(item, maxChars - length + 1);
      const array = Array.isArray(item);
      tasks.push({ text: array ? ']' : '}' });
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, child] = entries[index]!;
        tasks.push({ value: child });
        if (!array) tasks.push({ text: `${JSON.stringify(key)}:` });
        if (index > 0) tasks.push({ text: ',' });
      }
      write(array ? '[' : '{');
    }
  }
  return { json: parts.join(''), complete: length <= maxChars };
}

/** The value `JSON.stringify` would write for `value` (its `toJSON`, when it has one); null if that throws. */
function toJsonValue(value: unknown): unknown {
  try {
    if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
      const toJson = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJson === 'function') return toJson.call(value);
    }
    return value;
  } catch {
    return null;
  }
}

/**
 * The first `limit` entries `JSON.stringify` writes: array items (unwritable ones as null), or the own
 * enumerable properties it keeps.
 */
function readEntries(container: object, limit: number): Array<[string, unknown]> {
  const entries: Array<[string, unknown]> = [];
  try {
    if (Array.isArray(container)) {
      for (let index = 0; index < container.length && entries.length < limit; index++) {
        const item: unknown = container[index];
        entries.push([String(index), isSkipped(item) ? null : item]);
      }
      return entries;
    }
    for (const key of Object.keys(container)) {
      if (entries.length >= limit) break;
      const item = (container as Record<string, unknown>)[key];
      if (!isSkipped(item)) entries.push([key, item]);
    }
    return entries;
  } catch {
    // A throwing getter or proxy trap: written as an empty container rather than failing the whole block.
    return [];
  }
}

const isSkipped = (value: unknown) => value === undefined || typeof value === 'function' || typeof value === 'symbol';
