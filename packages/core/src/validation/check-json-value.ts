import { textProblem } from './valid-text.js';
import { utf8ByteLength } from './utf8-byte-length.js';

/** Any value JSON can carry. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Where in a value a problem is (keys and indexes from the root), and what it is. */
export interface JsonValueProblem {
  path: Array<string | number>;
  message: string;
}

/** Options of {@link checkJsonValue}. */
export interface CheckJsonValueOptions {
  /** Deepest nesting of arrays and objects; the value itself, when it is one, is level 1. */
  maxDepth: number;
  /** Largest size of the value's JSON, in UTF-8 bytes. @default Infinity */
  maxBytes?: number;
  /** The walk stops after this many problems. @default 10 */
  maxProblems?: number;
}

/** One array or object on the walk; primitives never get a frame, so a wide body costs no allocation per leaf. */
interface Frame {
  value: object;
  level: number;
  parent: Frame | null;
  key: string | number | null;
}

const pathOf = (frame: Frame | null, last?: string | number): Array<string | number> => {
  const path: Array<string | number> = last === undefined ? [] : [last];
  for (let current = frame; current !== null && current.key !== null; current = current.parent) path.push(current.key);
  return path.reverse();
};

const isPlainObject = (value: object): value is Record<string, unknown> => {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/**
 * Checks that `value` is a JSON value Deskpilot accepts: every string and key valid text (no NUL, no
 * lone surrogate), numbers finite, arrays and plain objects only, nested at most `maxDepth` levels,
 * serialised within `maxBytes`. One iterative walk: it never recurses, so a value nested a million
 * levels deep is a problem report, not a stack overflow. A cycle built by code ends at the depth
 * limit; for values built by code (which may share one object many times) give `maxBytes` too, which
 * also bounds the work. Returns the problems found, none when the value is accepted.
 */
export function checkJsonValue(value: unknown, options: CheckJsonValueOptions): JsonValueProblem[] {
  const maxBytes = options.maxBytes ?? Infinity;
  const maxProblems = options.maxProblems ?? 10;
  const problems: JsonValueProblem[] = [];
  // A lower bound of the JSON size, kept as the walk goes: it bounds the work on values built by code.
  let minimumBytes = 0;
  const tooLarge = (): JsonValueProblem => ({ path: [], message: `Must not exceed ${maxBytes} bytes of JSON` });
  const stack: Frame[] = [];

  /** Checks one value met at `key` of `parent`; false once the walk must stop. */
  const visit = (item: unknown, parent: Frame | null, key: string | number | null): boolean => {
    const at = () => (key === null ? pathOf(parent) : pathOf(parent, key));
    switch (typeof item) {
      case 'string': {
        minimumBytes += item.length + 2;
        const problem = textProblem(item);
        if (problem !== null) problems.push({ path: at(), message: problem });
        break;
      }
      case 'number':
        minimumBytes += 1;
        if (!Number.isFinite(item)) problems.push({ path: at(), message: 'Must be a finite number' });
        break;
      case 'boolean':
        minimumBytes += 4;
        break;
      case 'object': {
        minimumBytes += 2;
        if (item === null) break;
        const level = (parent?.level ?? 0) + 1;
        if (level > options.maxDepth)
          problems.push({ path: at(), message: `Must not be nested deeper than ${options.maxDepth} levels` });
        else if (!Array.isArray(item) && !isPlainObject(item))
          problems.push({ path: at(), message: 'Must be a JSON value' });
        else stack.push({ value: item, level, parent, key });
        break;
      }
      default:
        problems.push({ path: at(), message: 'Must be a JSON value' });
    }
    if (minimumBytes > maxBytes) {
      problems.length = 0;
      problems.push(tooLarge());
      return false;
    }
    return problems.length < maxProblems;
  };

  try {
    if (!visit(value, null, null)) return problems;
    while (stack.length > 0) {
      const frame = stack.pop()!;
      const before = stack.length;
      if (Array.isArray(frame.value)) {
        for (let index = 0; index < frame.value.length; index++) {
          if (!visit(frame.value[index], frame, index)) return problems;
        }
      } else {
        for (const key of Object.keys(frame.value)) {
          const item = (frame.value as Record<string, unknown>)[key];
          // JSON.stringify leaves out an undefined property, as a client that omits the field would.
          if (item === undefined) continue;
          minimumBytes += key.length + 3;
          const problem = textProblem(key);
          if (problem !== null) {
            problems.push({ path: pathOf(frame, key), message: `Key: ${problem}` });
            if (problems.length >= maxProblems) return problems;
          }
          if (!visit(item, frame, key)) return problems;
        }
      }
      // The containers went onto the stack first to last: reversed, they are walked in document order.
      for (let low = before, high = stack.length - 1; low < high; low++, high--) {
        const swap = stack[low]!;
        stack[low] = stack[high]!;
        stack[high] = swap;
      }
    }
    if (problems.length === 0 && Number.isFinite(maxBytes)) {
      // Bounded depth and size: serialising is safe now.
      if (utf8ByteLength(JSON.stringify(value)) > maxBytes) problems.push(tooLarge());
    }
  } catch {
    // A getter or proxy that throws: whatever it is, it is not a JSON value.
    return [{ path: [], message: 'Must be a JSON value' }];
  }
  return problems;
}
