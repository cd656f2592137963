import type {
  BudgetLimit,
  BudgetWarning,
  PriceTurn,
  TurnBudget,
  TurnBudgetAnswer,
  TurnBudgetHold,
  TurnBudgetRequest,
} from '@deskpilot/core/chat';
import { DeskpilotError, createMemoryTokenMeter, meterWindows, type TokenMeter } from '@deskpilot/core/session';
import { fromMicros, toMicros, type ProjectBudget, type UsageStore } from './usage-store.js';

/** Options of {@link createProjectBudgets}. */
export interface ProjectBudgetsOptions {
  /** Where each project's budget is kept (`setBudget` of a {@link UsageStore}), and the roll-ups a new budget's counts start from. */
  store: Pick<UsageStore, 'budget' | 'totals'>;
  /**
   * What each period's counts live in: a meter with day windows and one with `'month'` windows. Shared
   * meters count across replicas: `createRedisTokenMeter({ client, windowMs: 86_400_000, prefix:
   * 'deskpilot:project-day:' })` and `createRedisTokenMeter({ client, windowMs: 'month', prefix:
   * 'deskpilot:project-month:' })`. @default in this process (one count per replica)
   */
  meters?: { day: TokenMeter; month: TokenMeter };
  /**
   * Prices a turn's reservation (its tokens, at the model's input rate) for a budget of cost: the
   * catalogue the turns are priced with (`createPriceCatalogue()`). Without it, or for a model it does
   * not price in the budget's currency, a project with a budget of cost refuses turns (`budget_unpriced`).
   * @default none
   */
  priceTurn?: PriceTurn | undefined;
  /** How long a project's budget is reused before it is read again: a change made elsewhere holds within it. @default 5000 */
  cacheMs?: number;
  /** Clock in epoch milliseconds. @default Date.now */
  now?: () => number;
}

/** A project's budget and what it used this period (reservations of running turns included). */
export interface ProjectBudgetStatus {
  budget: ProjectBudget;
  /** The period the counts are of: its first instant and the next period's, ISO 8601. */
  period: { start: string; end: string };
  /** Tokens counted this period, when the budget has a limit of tokens. */
  tokens?: number;
  /** The amount counted this period in the budget's currency, when it has a limit of cost. */
  cost?: number;
}

/** The per-project budgets a chat handler's turns reserve from (`budget`), and what the Usage API reads of them. */
export interface ProjectBudgets extends TurnBudget {
  /** The project's budget and this period's counts; null when it has none. */
  status(projectKey: string): Promise<ProjectBudgetStatus | null>;
  /**
   * Starts the counts of a budget about to be set (its own, by its `since`) from what the roll-ups hold
   * for its period so far: a budget set mid-month counts the month's spend before it. Call it before
   * the budget is stored (a failure then changes nothing); turns running meanwhile count in the old one.
   */
  seed(projectKey: string, budget: ProjectBudget): Promise<void>;
  /** Forgets the project's cached budget: call it once a budget changed in this process. */
  forget(projectKey: string): void;
}

/** A limit of a budget, as a meter counts it: tokens, or millionths of the currency. */
interface MeteredLimit {
  kind: 'tokens' | 'cost';
  key: string;
  limit: number;
}

/** Projects whose budget is kept in memory at most (the oldest read is forgotten first). */
const maxCachedProjects = 10_000;
/** Budgets and periods whose warning is remembered as told, at most (the oldest forgotten first). */
const maxWarnedPeriods = 10_000;

/**
 * Budgets per project (`createUsageModule` gives them to the chat handler): each turn reserves what it
 * can be sent at most — tokens, and for a budget of cost those tokens priced at the model's input rate
 * (at most the limit) — while the project's count for the day or month (UTC) is under the limit, and
 * settles to what it used and cost. Parallel turns at the edge overspend by at most one reservation
 * (and what a turn writes past it). The first turn that finds a count past `warnAt` of its limit in a
 * period gets a warning (the `budget-warning` event), once per process.
 *
 * @example
 * const budgets = createProjectBudgets({ store: usageStore, priceTurn: createPriceCatalogue() });
 * createChatHandler({ …, budget: budgets });
 */
export function createProjectBudgets(options: ProjectBudgetsOptions): ProjectBudgets {
  const now = options.now ?? Date.now;
  const cacheMs = options.cacheMs ?? 5_000;
  if (!Number.isFinite(cacheMs) || cacheMs < 0) throw new TypeError('cacheMs must be a non-negative number');
  const meters = options.meters ?? {
    day: createMemoryTokenMeter({ windowMs: 86_400_000, now }),
    month: createMemoryTokenMeter({ windowMs: 'month', now }),
  };
  const cache = new Map<string, { budget: ProjectBudget | null; until: number }>();
  const warned: Warned = new Map();
  const budgetOf = async (projectKey: string): Promise<ProjectBudget | null> => {
    const cached = cache.get(projectKey);
    if (cached && cached.until > now()) return cached.budget;
    const budget = await options.store.budget(projectKey);
    cache.delete(projectKey);
    cache.set(projectKey, { budget, until: now() + cacheMs });
    if (cache.size > maxCachedProjects) cache.delete(cache.keys().next().value!);
    return budget;
  };
  return {
    async reserve(request) {
      const budget = await budgetOf(request.projectKey);
      if (!budget) return { ok: true, hold: settled, warnings: [] };
      return reserveWithin(budget, request, meters[budget.period], options.priceTurn, warned);
    },
    async status(projectKey) {
      const budget = await budgetOf(projectKey);
      if (!budget) return null;
      const meter = meters[budget.period];
      const windows = meterWindows(budget.period === 'day' ? 86_400_000 : 'month');
      const window = windows.of(now());
      const counted = async (limit: MeteredLimit | undefined) =>
        limit === undefined ? undefined : (await meter.used(limit.key)).used;
      const [tokens, cost] = await Promise.all([
        counted(tokenLimitOf(budget, projectKey)),
        counted(costLimitOf(budget, projectKey)),
      ]);
      return {
        budget,
        period: {
          start: new Date(windows.start(window)).toISOString(),
          end: new Date(windows.start(window + 1)).toISOString(),
        },
        ...(tokens === undefined ? {} : { tokens }),
        ...(cost === undefined ? {} : { cost: fromMicros(cost) }),
      };
    },
    async seed(projectKey, budget) {
      const time = now();
      const windows = meterWindows(budget.period === 'day' ? 86_400_000 : 'month');
      const from = new Date(windows.start(windows.of(time))).toISOString().slice(0, 10);
      const to = new Date(time).toISOString().slice(0, 10);
      const rows = await options.store.totals({ projectKey, from, to }, 'day');
      const meter = meters[budget.period];
      const tokenLimit = tokenLimitOf(budget, projectKey);
      const costLimit = costLimitOf(budget, projectKey);
      const tokens = rows.reduce((sum, row) => sum + row.inputTokens + row.outputTokens, 0);
      const currency = budget.cost?.currency;
      const cost = rows.reduce(
        (sum, row) => sum + (row.cost.find((each) => each.currency === currency)?.amount ?? 0),
        0,
      );
      if (tokenLimit && tokens > 0) await meter.add(tokenLimit.key, tokens);
      if (costLimit && cost > 0) await meter.add(costLimit.key, toMicros(cost));
    },
    forget: (projectKey) => void cache.delete(projectKey),
  };
}

/** A hold with nothing reserved. */
const settled: TurnBudgetHold = { settle: async () => {} };

/**
 * Where a project's counts are kept: one key per kind (and currency), apart from every other project's
 * and from an earlier budget's (by when each was set).
 */
const tokensKey = (projectKey: string, since: number) => JSON.stringify([projectKey, since, 'tokens']);
const costKey = (projectKey: string, since: number, currency: string) =>
  JSON.stringify([projectKey, since, 'cost', currency]);

/** The budget's limit of tokens, as its meter counts it. */
const tokenLimitOf = (budget: ProjectBudget, projectKey: string): MeteredLimit | undefined =>
  budget.tokens === undefined
    ? undefined
    : { kind: 'tokens', key: tokensKey(projectKey, budget.since ?? 0), limit: budget.tokens };

/** The budget's limit of cost, in millionths of its currency, as its meter counts it. */
const costLimitOf = (budget: ProjectBudget, projectKey: string): MeteredLimit | undefined =>
  budget.cost === undefined
    ? undefined
    : {
        kind: 'cost',
        key: costKey(projectKey, budget.since ?? 0, budget.cost.currency),
        limit: toMicros(budget.cost.amount),
      };

/** The budget as a refusal or a warning names it. */
function limitOf(budget: ProjectBudget, projectKey: string, kind: 'tokens' | 'cost'): BudgetLimit {
  return kind === 'tokens'
    ? { projectKey, period: budget.period, kind, limit: budget.tokens! }
    : { projectKey, period: budget.period, kind, limit: budget.cost!.amount, currency: budget.cost!.currency };
}

/** Warnings already told, by meter key and window: once per budget and period in a process. */
type Warned = Map<string, true>;

/** The limits of `budget` a turn reserves from, with what it reserves from each; `unpriced` when a budget of cost cannot price it. */
function meteredOf(
  budget: ProjectBudget,
  turn: TurnBudgetRequest,
  priceTurn: PriceTurn | undefined,
): Array<MeteredLimit & { amount: number }> | 'unpriced' {
  const tokens = Math.max(0, Math.ceil(turn.tokens));
  const metered: Array<MeteredLimit & { amount: number }> = [];
  // Never more than the limit: a small budget still lets a turn in.
  const tokenLimit = tokenLimitOf(budget, turn.projectKey);
  if (tokenLimit) metered.push({ ...tokenLimit, amount: Math.min(tokens, tokenLimit.limit) });
  const costLimit = costLimitOf(budget, turn.projectKey);
  if (costLimit) {
    const price = priceTurn?.({ inputTokens: tokens, outputTokens: 0, totalTokens: tokens }, turn.model);
    // A turn a budget of cost cannot count is not let through uncounted.
    if (!price || price.currency !== budget.cost!.currency) return 'unpriced';
    metered.push({ ...costLimit, amount: Math.min(toMicros(price.amount), costLimit.limit) });
  }
  return metered;
}

/**
 * Reserves a turn from each limit of `budget`, in turn; a refusal, or a meter that fails, gives back
 * what the others reserved. A meter that fails refuses the turn (`store_unavailable`): the cap holds.
 */
async function reserveWithin(
  budget: ProjectBudget,
  turn: TurnBudgetRequest,
  meter: TokenMeter,
  priceTurn: PriceTurn | undefined,
  warned: Warned,
): Promise<TurnBudgetAnswer> {
  const metered = meteredOf(budget, turn, priceTurn);
  if (metered === 'unpriced')
    return {
      ok: false,
      reason: 'unpriced',
      budget: limitOf(budget, turn.projectKey, 'cost'),
      used: 0,
      retryAfterMs: 0,
    };
  const taken: Array<MeteredLimit & { amount: number; window: number }> = [];
  const giveBack = () =>
    Promise.all(taken.map((held) => Promise.resolve(meter.add(held.key, -held.amount, held.window)).catch(() => {})));
  const due: Array<{ once: string; warning: BudgetWarning }> = [];
  try {
    for (const limit of metered) {
      const reservation = await meter.reserve(limit.key, limit.amount, limit.limit);
      const shown = (count: number) => (limit.kind === 'cost' ? fromMicros(count) : count);
      if (!reservation.reserved) {
        await giveBack();
        const named = limitOf(budget, turn.projectKey, limit.kind);
        return {
          ok: false,
          reason: 'exceeded',
          budget: named,
          used: shown(reservation.used),
          retryAfterMs: reservation.resetMs,
        };
      }
      taken.push({ ...limit, amount: reservation.tokens, window: reservation.window });
      // Judged on what was counted before this turn's reservation (settled turns and those running).
      const before = reservation.used - reservation.tokens;
      const once = `${limit.key}\u0000${reservation.window}`;
      if (before >= budget.warnAt * limit.limit && !warned.has(once))
        due.push({
          once,
          warning: {
            budget: limitOf(budget, turn.projectKey, limit.kind),
            used: shown(before),
            threshold: budget.warnAt,
          },
        });
    }
  } catch (cause) {
    await giveBack();
    throw DeskpilotError.isInstance(cause)
      ? cause
      : new DeskpilotError('store_unavailable', { detail: 'The project’s budget is unavailable.', cause });
  }
  // Told once per budget and period, and only by a turn let in (a refused one tells the next).
  for (const { once } of due) {
    warned.set(once, true);
    if (warned.size > maxWarnedPeriods) warned.delete(warned.keys().next().value!);
  }
  return { ok: true, hold: holdOf(meter, taken, budget.cost?.currency), warnings: due.map(({ warning }) => warning) };
}

/**
 * The hold of a turn's reservations: settled to the tokens it used and what it cost; a turn that used
 * something but has no cost in the budget's currency keeps its reservation counted.
 */
function holdOf(
  meter: TokenMeter,
  taken: ReadonlyArray<MeteredLimit & { amount: number; window: number }>,
  currency: string | undefined,
): TurnBudgetHold {
  let done = false;
  return {
    async settle({ usage, cost }) {
      if (done) return;
      done = true;
      const spent = (held: (typeof taken)[number]) => {
        if (!usage || usage.totalTokens <= 0) return 0;
        if (held.kind === 'tokens') return usage.totalTokens;
        return cost && cost.currency === currency ? toMicros(cost.amount) : held.amount;
      };
      await Promise.all(taken.map((held) => meter.add(held.key, spent(held) - held.amount, held.window)));
    },
  };
}
