import { ChatToolError } from './chat-tool-error.js';

/** The record a tool looked up, or a safe "not found" error naming it (shown to the model and the user). */
export function found<T>(record: T | null | undefined, label: string): T {
  if (record === null || record === undefined) throw new ChatToolError(`${label} was not found.`);
  return record;
}
