import type { ChatToolDefinition } from '../tools/chat-tool.js';
import type { ChatToolSource } from '../tools/chat-tool-source.js';

/** The tool sources' tools for a project; a source that fails anyway (it should not) is reported and left out. */
export async function sourcedTools(
  deps: { toolSources: readonly ChatToolSource[]; onError: (error: unknown) => void },
  projectKey: string,
  signal?: AbortSignal,
  refresh: readonly string[] = [],
): Promise<ChatToolDefinition[]> {
  if (deps.toolSources.length === 0) return [];
  const lists = await Promise.all(
    deps.toolSources.map((source) =>
      source.toolsFor({ projectKey, signal, refresh }).catch((error: unknown) => {
        deps.onError(error);
        return [];
      }),
    ),
  );
  return lists.flat();
}
