import type { CapabilityRegistry } from '../../capabilities/capabilities.js';
import type { ChatToolDefinition } from './chat-tool.js';

/**
 * Tools that come from another system at run time — a project's MCP servers (`createMcpToolSource`
 * from `@deskpilot/mcp`) — offered beside the handler's own and behind the same gate: each needs a
 * registered capability, a write one (or `requiresApproval`) only runs once the user approved it,
 * exactly once.
 */
export interface ChatToolSource {
  /** The capability flags its tools need, added to the handler's registry (a clash with another kind stops the handler from starting). */
  readonly capabilities: CapabilityRegistry;
  /**
   * The tools a project may be offered now. Called once per turn; the source keeps its connections
   * and lists between calls, bounds each by a timeout, and leaves out the tools of a system that does
   * not answer — it never throws for that (the chat goes on without them). `signal` ends when the
   * turn is cut.
   */
  toolsFor(request: {
    projectKey: string;
    signal?: AbortSignal | undefined;
    /**
     * The tools of this source whose approved calls the turn runs: ask their systems now, even one in
     * a pause after a failure (an approval is decided once).
     */
    refresh?: readonly string[] | undefined;
  }): Promise<readonly ChatToolDefinition[]>;
  /**
   * The capability a tool of this source needs, from configuration alone (no I/O): what an approval
   * answer is re-checked against while the system is unreachable. `undefined` for a name that is not
   * one of its tools.
   */
  capabilityOf(toolName: string): string | undefined;
}
