import { describe, expect, it } from 'vitest';
import { usageCsv } from './usage-csv.js';

const row = (key: string, cost: Array<{ currency: string; amount: number }>) => ({
  key,
  turns: 2,
  titles: 1,
  estimated: 0,
  inputTokens: 300,
  cachedInputTokens: 100,
  outputTokens: 40,
  cost,
  pricedCalls: 3,
});

describe('usageCsv', () => {
  it('writes a column per currency (0 where a row has none), sorted, lines ending in CRLF', () => {
    const csv = usageCsv('model', [
      row('openai:gpt-4o', [{ currency: 'USD', amount: 0.25 }]),
      row('ollama:llama3', [{ currency: 'EUR', amount: 1.5 }]),
    ]);
    expect(csv).toBe(
      'model,turns,titles,estimated,input_tokens,cached_input_tokens,output_tokens,priced_calls,cost_EUR,cost_USD\r\n' +
        'openai:gpt-4o,2,1,0,300,100,40,3,0,0.25\r\n' +
        'ollama:llama3,2,1,0,300,100,40,3,1.5,0\r\n',
    );
  });

  it('quotes cells with commas, quotes or line breaks, and keeps a spreadsheet from running a cell as a formula', () => {
    const csv = usageCsv('user', [
      row('=HYPERLINK("http://evil")@x.com', []),
      row('+1@x.com', []),
      row('-2@x.com', []),
      row('@SUM(A1)', []),
      row('a,b\nc', []),
    ]);
    const keys = csv
      .split('\r\n')
      .slice(1, -1)
      .map((line) => line.slice(0, line.lastIndexOf(',2,1,0')));
    expect(keys).toEqual([`"'=HYPERLINK(""http://evil"")@x.com"`, "'+1@x.com", "'-2@x.com", "'@SUM(A1)", '"a,b\nc"']);
  });

  it('writes tools and approvals with their own columns', () => {
    expect(usageCsv('tool', [{ tool: 'getOrder', calls: 7 }])).toBe('tool,calls\r\ngetOrder,7\r\n');
    expect(
      usageCsv('approval', [
        { tool: 'refundOrder', outcome: 'denied', decisions: 2, meanWaitMs: 1500, maxWaitMs: 2000 },
      ]),
    ).toBe('tool,outcome,decisions,mean_wait_ms,max_wait_ms\r\nrefundOrder,denied,2,1500,2000\r\n');
  });
});
