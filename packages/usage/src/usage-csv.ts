import type { ApprovalUsageRow, ToolUsageRow, UsageRow } from './usage-store.js';

/** A cell as RFC 4180 writes it; text a spreadsheet would run as a formula starts with `'` (OWASP's CSV injection advice). */
function cell(value: string | number): string {
  if (typeof value === 'number') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const line = (cells: ReadonlyArray<string | number>) => `${cells.map(cell).join(',')}\r\n`;

/**
 * A report's rows as CSV with a header line: per day, user or model, its calls, tokens and a column
 * of cost per currency; per tool, its calls; per approval, its tool, outcome, decisions and waits.
 */
export function usageCsv(
  by: 'day' | 'user' | 'model' | 'tool' | 'approval',
  rows: ReadonlyArray<UsageRow | ToolUsageRow | ApprovalUsageRow>,
): string {
  if (by === 'tool')
    return line(['tool', 'calls']) + (rows as ToolUsageRow[]).map((row) => line([row.tool, row.calls])).join('');
  if (by === 'approval')
    return (
      line(['tool', 'outcome', 'decisions', 'mean_wait_ms', 'max_wait_ms']) +
      (rows as ApprovalUsageRow[])
        .map((row) => line([row.tool, row.outcome, row.decisions, row.meanWaitMs, row.maxWaitMs]))
        .join('')
    );
  const totals = rows as UsageRow[];
  const currencies = [...new Set(totals.flatMap((row) => row.cost.map((cost) => cost.currency)))].sort();
  const header = [by, 'turns', 'titles', 'estimated', 'input_tokens', 'cached_input_tokens', 'output_tokens'];
  return (
    line([...header, 'priced_calls', ...currencies.map((currency) => `cost_${currency}`)]) +
    totals
      .map((row) =>
        line([
          row.key,
          row.turns,
          row.titles,
          row.estimated,
          row.inputTokens,
          row.cachedInputTokens,
          row.outputTokens,
          row.pricedCalls,
          ...currencies.map((currency) => row.cost.find((cost) => cost.currency === currency)?.amount ?? 0),
        ]),
      )
      .join('')
  );
}
