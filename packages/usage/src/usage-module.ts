import type { ChatContext, ChatModule, ChatModuleKit } from '@deskpilot/core/chat';
import { jsonResponse, serveRoute, type RouteRequestInput } from '@deskpilot/core/module';
import { DeskpilotError, type HttpRequest, type HttpResponse, type JsonValue } from '@deskpilot/core/session';
import type * as z from 'zod/mini';
import { catalogue, createPriceCatalogue, type PriceCatalogueOptions } from './price-catalogue.js';
import { createProjectBudgets, type ProjectBudgets, type ProjectBudgetsOptions } from './project-budgets.js';
import { usageCsv } from './usage-csv.js';
import { usageRoutes, type pricingSchema, type usageReportBodySchema } from './usage-api.js';
import type { ProjectBudget, UsageQuery, UsageStore } from './usage-store.js';

/** Options of {@link createUsageModule}. */
export interface UsageModuleOptions {
  /** Where the roll-ups and budgets are kept (`createPostgresUsageStore`, `createSqliteUsageStore`, …). */
  store: UsageStore;
  /** How turns are priced: the operator's prices first, then the maintained catalogue; `false`: not priced. @default {} (the catalogue alone) */
  prices?: PriceCatalogueOptions | false;
  /**
   * The projects' budgets: where their counts live (`meters`, shared on Redis across replicas) and how
   * long a budget is cached; `false`: none enforced (the routes still set them). @default counts in this process
   */
  budgets?: Omit<ProjectBudgetsOptions, 'store' | 'priceTurn' | 'now'> | false;
  /** Clock in epoch milliseconds. @default Date.now */
  now?: () => number;
}

/** The usage module: a chat module (`modules` of `createChatHandler`), with its budgets. */
export interface UsageModule extends ChatModule {
  readonly name: 'usage';
  /** The budgets turns reserve from, when enforced. */
  readonly budgets: ProjectBudgets | undefined;
}

/** The longest period a report covers, in days. */
const maxReportDays = 366;

/**
 * What the assistant costs, as a chat module: each turn and title call priced (`priceTurn`) and rolled
 * up (`usage`: turns, tools and approval decisions), each project's budget enforced (`budget`), and the
 * Usage API — `POST /chat/usage` (report), `/chat/usage/export` (CSV), `/chat/usage/budget` and
 * `/chat/usage/budget/update` — served by the chat handler on its own identity and limits. A project
 * admin (`userRole: 'admin'`) reads the whole project and sets its budget; anyone else reads their own
 * usage only.
 *
 * @example
 * const usage = createUsageModule({ store: createPostgresUsageStore(client), prices: { prices: operatorPrices } });
 * createChatHandler({ …, modules: [usage] });
 */
export function createUsageModule(options: UsageModuleOptions): UsageModule {
  const now = options.now ?? Date.now;
  const priceTurn = options.prices === false ? undefined : createPriceCatalogue(options.prices ?? {});
  const budgets =
    options.budgets === false
      ? undefined
      : createProjectBudgets({ ...options.budgets, store: options.store, priceTurn, now });
  const pricing = pricingOf(options.prices);
  const deps: UsageRouteDeps = { store: options.store, budgets, pricing, now };
  return {
    name: 'usage',
    priceTurn,
    usage: options.store,
    budget: budgets,
    budgets,
    routes: [
      serveRoute(usageRoutes.usageReport, (kit: ChatModuleKit, request, input) =>
        serveReport(deps, kit, request, input),
      ),
      serveRoute(usageRoutes.exportUsage, (kit: ChatModuleKit, request, input) =>
        serveExport(deps, kit, request, input),
      ),
      serveRoute(usageRoutes.usageBudget, (kit: ChatModuleKit, request, input) =>
        serveBudget(deps, kit, request, input),
      ),
      serveRoute(usageRoutes.updateUsageBudget, (kit: ChatModuleKit, request, input) =>
        serveBudgetUpdate(deps, kit, request, input),
      ),
    ],
  };
}

/** What the routes run on besides the chat's kit. */
interface UsageRouteDeps {
  store: UsageStore;
  budgets: ProjectBudgets | undefined;
  pricing: z.output<typeof pricingSchema>;
  now: () => number;
}

/** Where the figures' prices come from, as a report says. */
function pricingOf(prices: PriceCatalogueOptions | false | undefined): z.output<typeof pricingSchema> {
  if (prices === false) return { catalogue: null, operator: [] };
  const operator = Object.entries(prices?.prices ?? {}).map(([model, price]) => ({
    model,
    currency: price.currency ?? 'USD',
    asOf: price.asOf,
  }));
  return { catalogue: prices?.catalogue === false ? null : { ...catalogue }, operator };
}

const noStore: [string, string] = ['cache-control', 'no-store'];
/**
 * Whether the caller administers the project: its role says so, and a signed grant or the host's
 * session vouches for it (a body's claim reads its own usage only).
 */
const isAdmin = (kit: ChatModuleKit, context: ChatContext) => kit.verifiedIdentity && context.userRole === 'admin';

/** A day's instant, or NaN when the text is no real date from 1970 on. */
const dayAt = (day: string) => {
  const at = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(at) || at < 0 || new Date(at).toISOString().slice(0, 10) !== day ? Number.NaN : at;
};

/** The query a report runs: the caller's project, a period that is one, and the caller's own rows unless an admin asks for more. */
function reportQuery(
  kit: ChatModuleKit,
  context: ChatContext,
  body: z.output<typeof usageReportBodySchema>,
): UsageQuery {
  const from = dayAt(body.from);
  const to = dayAt(body.to);
  const invalid = (path: string, message: string) =>
    new DeskpilotError('invalid_request', { detail: 'The period is invalid.', errors: [{ path, message }] });
  if (Number.isNaN(from)) throw invalid('from', 'Must be a real date, from 1970 on');
  if (Number.isNaN(to)) throw invalid('to', 'Must be a real date, from 1970 on');
  if (to < from) throw invalid('to', 'Must not be before from');
  if ((to - from) / 86_400_000 + 1 > maxReportDays)
    throw invalid('to', `A report covers at most ${maxReportDays} days`);
  const asked = body.user?.trim().toLowerCase();
  if (asked === '') throw invalid('user', 'Must not be blank');
  const admin = isAdmin(kit, context);
  if (!admin && asked !== undefined && asked !== context.userEmail)
    throw new DeskpilotError('forbidden', { detail: 'Only a project admin reads another user’s usage.' });
  const user = admin ? asked : context.userEmail;
  return { projectKey: context.projectKey, from: body.from, to: body.to, ...(user === undefined ? {} : { user }) };
}

/** The report's rows, from the roll-ups. */
async function reportOf(deps: UsageRouteDeps, query: UsageQuery, by: z.output<typeof usageReportBodySchema>['by']) {
  if (by === 'tool') return deps.store.tools(query);
  if (by === 'approval') return deps.store.approvals(query);
  return deps.store.totals(query, by);
}

type ReportInput = RouteRequestInput<(typeof usageRoutes)['usageReport']>;

async function serveReport(deps: UsageRouteDeps, kit: ChatModuleKit, request: HttpRequest, input: ReportInput) {
  const body = await input.body();
  const caller = await kit.caller(request, body.context, { grantUse: 'usage' });
  const query = reportQuery(kit, caller.context, body);
  const rows = await reportOf(deps, query, body.by);
  const report = { ...query, by: body.by, user: query.user ?? null, rows, pricing: deps.pricing };
  return jsonResponse(200, report, [...Object.entries(caller.headers), noStore]);
}

async function serveExport(
  deps: UsageRouteDeps,
  kit: ChatModuleKit,
  request: HttpRequest,
  input: RouteRequestInput<(typeof usageRoutes)['exportUsage']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const caller = await kit.caller(request, body.context, { grantUse: 'usage' });
  const query = reportQuery(kit, caller.context, body);
  const rows = await reportOf(deps, query, body.by);
  // The file's name: the project's key kept to safe characters.
  const name = `usage-${query.projectKey.replace(/[^\w.-]+/g, '_')}-${query.from}-${query.to}-${body.by}.csv`;
  return {
    status: 200,
    headers: [
      ['content-type', 'text/csv; charset=utf-8'],
      ['content-disposition', `attachment; filename="${name}"`],
      ...Object.entries(caller.headers),
      noStore,
    ],
    body: usageCsv(body.by, rows),
  };
}

/** The caller, who must be an admin of the project (with a verified identity). */
async function adminCaller(kit: ChatModuleKit, request: HttpRequest, context: unknown, options?: { fresh: boolean }) {
  const caller = await kit.caller(request, context, { ...options, grantUse: 'usage' });
  if (!isAdmin(kit, caller.context))
    throw new DeskpilotError('forbidden', { detail: 'Only a project admin reads or sets its budget.' });
  return caller;
}

/** The project's budget as the routes answer it: with this period's counts when budgets are enforced. */
async function budgetStatus(deps: UsageRouteDeps, projectKey: string) {
  if (!deps.budgets) return { projectKey, budget: await deps.store.budget(projectKey), period: null, used: null };
  const status = await deps.budgets.status(projectKey);
  if (!status) return { projectKey, budget: null, period: null, used: null };
  const { budget, period, tokens, cost } = status;
  return {
    projectKey,
    budget,
    period,
    used: { ...(tokens === undefined ? {} : { tokens }), ...(cost === undefined ? {} : { cost }) },
  };
}

/** A budget as the trail records it: its set fields only. */
const budgetJson = (budget: ProjectBudget | null): JsonValue =>
  budget && {
    period: budget.period,
    ...(budget.tokens === undefined ? {} : { tokens: budget.tokens }),
    ...(budget.cost ? { cost: { currency: budget.cost.currency, amount: budget.cost.amount } } : {}),
    warnAt: budget.warnAt,
  };

async function serveBudget(
  deps: UsageRouteDeps,
  kit: ChatModuleKit,
  request: HttpRequest,
  input: RouteRequestInput<(typeof usageRoutes)['usageBudget']>,
) {
  const body = await input.body();
  const caller = await adminCaller(kit, request, body.context);
  const status = await budgetStatus(deps, caller.context.projectKey);
  return jsonResponse(200, status, [...Object.entries(caller.headers), noStore]);
}

/** The store's or meter's failure as the client sees it: 503, nothing changed. */
const unavailable = (cause: unknown) =>
  DeskpilotError.isInstance(cause)
    ? cause
    : new DeskpilotError('store_unavailable', { detail: 'The budget could not be changed: nothing changed.', cause });

/**
 * Sets the budget: its counts started from the period's roll-ups first (a failure changes nothing),
 * then stored, then recorded in the project's trail — a change the trail cannot take is undone (503
 * `audit_unavailable`): a budget never changes unrecorded, and never on an identity a body claims.
 */
async function serveBudgetUpdate(
  deps: UsageRouteDeps,
  kit: ChatModuleKit,
  request: HttpRequest,
  input: RouteRequestInput<(typeof usageRoutes)['updateUsageBudget']>,
) {
  const body = await input.body();
  // A write: the grant's session is read now, not from a cache (a usage grant's role is its own).
  const caller = await adminCaller(kit, request, body.context, { fresh: true });
  if (!kit.audit)
    throw new DeskpilotError('forbidden', {
      detail: 'Budgets are set here only when the chat service keeps an audit trail (`audit`).',
    });
  const audit = kit.audit;
  const { projectKey, userEmail } = caller.context;
  const after: ProjectBudget | null = body.budget && { ...body.budget, since: kit.now() };
  const before = await deps.store.budget(projectKey).catch((cause: unknown) => Promise.reject(unavailable(cause)));
  if (after) await deps.budgets?.seed(projectKey, after).catch((cause: unknown) => Promise.reject(unavailable(cause)));
  await deps.store.setBudget(projectKey, after).catch((cause: unknown) => Promise.reject(unavailable(cause)));
  deps.budgets?.forget(projectKey);
  try {
    await audit.append({
      projectKey,
      type: 'usage-budget-changed',
      actor: userEmail,
      session: caller.signInSessionId ?? null,
      subject: projectKey,
      data: { before: budgetJson(before), after: budgetJson(after) },
      at: kit.now(),
    });
  } catch (error) {
    // Undone only while it is still this change (another admin's, recorded since, stays).
    const current = await deps.store.budget(projectKey).catch(() => undefined);
    if (current !== undefined && (current?.since ?? null) === (after?.since ?? null))
      await deps.store.setBudget(projectKey, before).catch(kit.onError);
    deps.budgets?.forget(projectKey);
    throw DeskpilotError.isInstance(error)
      ? error
      : new DeskpilotError('audit_unavailable', {
          detail: 'The change could not be recorded: nothing changed.',
          cause: error,
        });
  }
  const status = await budgetStatus(deps, projectKey);
  return jsonResponse(200, status, [...Object.entries(caller.headers), noStore]);
}
