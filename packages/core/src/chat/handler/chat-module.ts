import type { AuditStore } from '../../audit/audit-store.js';
import type { HttpRequest } from '../../http/http-request.js';
import type { ServedRoute } from '../../routes/route-table.js';
import type { ChatEventListener } from '../chat-event.js';
import type { ChatContext } from '../context/parse-chat-context.js';
import type { ChatGrantUse } from '../context/chat-grant.js';
import type { TurnBudget } from './turn-budget.js';
import type { PriceTurn } from './turn-cost.js';
import type { UsageRecorder } from './usage-recorder.js';

/** Who calls a module's route: the verified context, and the rate limit's headers to answer with. */
export interface ChatModuleCaller {
  context: ChatContext;
  /** The sign-in session a grant or the host's session names, when known (what an audit record names). */
  signInSessionId: string | undefined;
  /** `RateLimit` headers of the caller's admission: send them with the answer. */
  headers: Record<string, string>;
}

/** What a module's routes run on: the chat handler's identity, limits, trail and clock. */
export interface ChatModuleKit {
  /**
   * The caller of a request whose body carries `context`: identity and flags read as the chat's own
   * routes read them (a signed grant, the host's session, or the body when the handler trusts it),
   * then admitted under the per-user limit of reads (`limits.history`). Throws `unauthenticated`,
   * `invalid_request` or `rate_limited`. With `fresh`, the grant's session is read now, never from
   * a cache (a route that writes: a role just taken away in the session's project must not write; a
   * `usage` grant's role is its own, as of its signing). With `grantUse`,
   * a grant signed for that use is taken beside a chat grant (`usage`: for a project its holder
   * administers from a session in another); no chat route takes one.
   */
  caller(
    request: HttpRequest,
    context: unknown,
    options?: { fresh?: boolean; grantUse?: Exclude<ChatGrantUse, 'chat' | 'tools'> },
  ): Promise<ChatModuleCaller>;
  /** The chat's audit trail (`audit`), when it keeps one: only with a verified identity. */
  audit: AuditStore | undefined;
  /** Whether identity is verified (a context secret or the host's session), not claimed by the body. */
  verifiedIdentity: boolean;
  /** The handler's clock, epoch milliseconds. */
  now(): number;
  /** Reports an unexpected error (clients only get safe messages). */
  onError(error: unknown): void;
  emit: ChatEventListener;
}

/**
 * A feature of the chat service in a room of its own (`createUsageModule` of `@deskpilot/usage`): its
 * routes, served beside the chat's under `/chat/` (same identity, CORS, errors and drain), and the
 * ports of a turn it fills — each port given by at most one module or option.
 */
export interface ChatModule {
  /** Unique among the handler's modules. */
  readonly name: string;
  /** Its routes, declared (`declareRoute`) with the function that serves each: `auth: 'chat'`, paths under `/chat/`. */
  readonly routes?: ReadonlyArray<ServedRoute<ChatModuleKit>> | undefined;
  /** Prices each turn's usage (as the handler's `priceTurn`). */
  readonly priceTurn?: PriceTurn | undefined;
  /** Where each settled turn, title call and approval decision goes (as the handler's `usage`). */
  readonly usage?: UsageRecorder | undefined;
  /** The project's budget (as the handler's `budget`). */
  readonly budget?: TurnBudget | undefined;
}

/** The ports of a turn a module can fill. */
type ChatModulePorts = Pick<ChatModule, 'priceTurn' | 'usage' | 'budget'>;

/**
 * The handler's ports, each from its option or the one module that gives it; throws a TypeError for a
 * port given twice, two modules of one name, or a module's route outside `/chat/` or not `auth: 'chat'`.
 */
export function chatModulePorts(options: ChatModulePorts, modules: readonly ChatModule[]): Required<ChatModulePorts> {
  const names = new Set<string>();
  const ports: ChatModulePorts = { priceTurn: options.priceTurn, usage: options.usage, budget: options.budget };
  for (const module of modules) {
    if (names.has(module.name)) throw new TypeError(`createChatHandler: two modules are named ${module.name}`);
    names.add(module.name);
    for (const port of ['priceTurn', 'usage', 'budget'] as const) {
      if (module[port] === undefined) continue;
      if (ports[port] !== undefined)
        throw new TypeError(`createChatHandler: ${port} is given twice (the module ${module.name}, and another)`);
      Object.assign(ports, { [port]: module[port] });
    }
    for (const { declaration } of module.routes ?? [])
      if (!declaration.path.startsWith('/chat/') || declaration.auth !== 'chat')
        throw new TypeError(
          `createChatHandler: the module ${module.name}'s route ${declaration.operationId} must be under /chat/ with auth 'chat'`,
        );
  }
  return ports as Required<ChatModulePorts>;
}
