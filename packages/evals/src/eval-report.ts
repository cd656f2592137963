import type { EvalReport, EvalResult } from './run-evals.js';

const escape = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** A result's cell: pass, or FAIL with each failed scorer's reason. */
function cell(result: EvalResult | undefined): string {
  if (!result) return '<td class="none">—</td>';
  const failed = result.scores.filter((score) => !score.pass);
  const reasons = failed.map((score) => `<li><b>${escape(score.scorer)}</b>: ${escape(score.reason)}</li>`).join('');
  const cost = Object.entries(result.cost)
    .map(([currency, amount]) => `${amount.toFixed(6)} ${escape(currency)}`)
    .join(', ');
  return `<td class="${result.passed ? 'pass' : 'fail'}">${result.passed ? 'pass' : 'FAIL'}<small>${result.steps} steps · ${result.tokens} tokens${cost ? ` · ${cost}` : ''}</small>${reasons ? `<ul>${reasons}</ul>` : ''}</td>`;
}

/**
 * Reports side by side as one HTML page (no script, no outside asset): a column per run — model A
 * and model B, or before and after a prompt change — a row per scenario, each failed scorer's reason
 * in its cell.
 */
export function reportHtml(reports: readonly EvalReport[]): string {
  const ids = [...new Set(reports.flatMap((report) => report.results.map((result) => result.id)))];
  const head = reports
    .map(
      (report) =>
        `<th>${escape(report.model)}<small>${report.passed}/${report.total} passed · ${escape(report.startedAt)}</small></th>`,
    )
    .join('');
  const rows = ids
    .map((id) => {
      const title = reports.flatMap((report) => report.results).find((result) => result.id === id)!.title;
      const cells = reports.map((report) => cell(report.results.find((result) => result.id === id))).join('');
      return `<tr><th scope="row">${escape(id)}<small>${escape(title)}</small></th>${cells}</tr>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Deskpilot evals</title>
<style>body{font:14px system-ui,sans-serif;margin:1.5rem;color:#1c2330}table{border-collapse:collapse}th,td{border:1px solid #e3e6eb;padding:.4rem .6rem;text-align:left;vertical-align:top}small{display:block;color:#667085;font-weight:normal}.pass{background:#ecfdf3}.fail{background:#fef3f2}ul{margin:.3rem 0 0;padding-left:1rem}</style>
</head><body><h1>Deskpilot evals</h1>
<table><thead><tr><th>Scenario</th>${head}</tr></thead><tbody>
${rows}
</tbody></table></body></html>
`;
}

/** What changed from `before` to `after`, scenario by scenario: what broke, what was fixed, and the totals. */
export function compareReports(before: EvalReport, after: EvalReport): string {
  const lines = [
    `${before.model} → ${after.model}: ${before.passed}/${before.total} → ${after.passed}/${after.total} scenarios passed`,
  ];
  for (const result of after.results) {
    const was = before.results.find((each) => each.id === result.id);
    if (!was || was.passed === result.passed) continue;
    lines.push(`${result.passed ? 'fixed ' : 'broken'}  ${result.id}`);
    for (const score of result.scores.filter((each) => !each.pass))
      lines.push(`        ${score.scorer}: ${score.reason}`);
  }
  const tokens = (report: EvalReport) => report.results.reduce((sum, result) => sum + result.tokens, 0);
  lines.push(`tokens: ${tokens(before)} → ${tokens(after)}`);
  return lines.join('\n');
}
