// The Usage API of the chat service (`@deskpilot/usage/routes`), called with the studio's chat context.
import { usageRoutes } from '@deskpilot/usage/routes';
import { chatClient, usageSetup } from './studio-api.ts';

/** The Usage API's calls for a project, and the context (a fresh grant) to send with them. */
export async function usageCalls(projectKey: string) {
  const { chatServiceUrl, context } = await usageSetup(projectKey);
  return { calls: chatClient(chatServiceUrl).routes(usageRoutes), context };
}

type Calls = Awaited<ReturnType<typeof usageCalls>>['calls'];
/** A report as `POST /chat/usage` answers it. */
export type Report = Awaited<ReturnType<Calls['usageReport']>>;
/** A project's budget with this period's counts. */
export type BudgetStatus = Awaited<ReturnType<Calls['usageBudget']>>;
/** A project's budget. */
export type Budget = NonNullable<BudgetStatus['budget']>;
/** A day's, user's or model's totals. */
export type Row = Extract<Report['rows'][number], { turns: number }>;
/** A tool's calls. */
export type ToolRow = Extract<Report['rows'][number], { calls: number }>;
/** The approvals of a tool that ended one way. */
export type ApprovalRow = Extract<Report['rows'][number], { outcome: string }>;

/** An amount in a currency, as a person reads it. */
export const money = (amount: number, currency: string) =>
  new Intl.NumberFormat('en', {
    style: 'currency',
    currency,
    maximumFractionDigits: amount !== 0 && amount < 1 ? 4 : 2,
  }).format(amount);
/** A count, grouped by thousands. */
export const count = (value: number) => new Intl.NumberFormat('en').format(value);
