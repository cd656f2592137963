import type { ChatModel, PriceTurn } from '@deskpilot/core/chat';
import type { EvalScenario } from './eval-scenario.js';
import { evalScorers, type EvalScore, type EvalScorer } from './eval-scorers.js';
import { runScenario } from './run-scenario.js';

/** A scenario's row of a report: its scores, and what it cost. */
export interface EvalResult {
  id: string;
  category: EvalScenario['category'];
  title: string;
  /** Every scorer asked, passed or not: the scenario passes when all do. */
  scores: EvalScore[];
  passed: boolean;
  steps: number;
  tokens: number;
  /** Per currency, when the chat handler priced the turns. */
  cost: Record<string, number>;
  durationMs: number;
  /** What failed along the way (the provider, a replay with no recording): a scenario with one does not pass. */
  errors: string[];
}

/** A suite's run on one model: each scenario's result, and the share that passed. */
export interface EvalReport {
  /** The model, as the chat names it (`provider:modelId`), or the label given. */
  model: string;
  startedAt: string;
  results: EvalResult[];
  /** Scenarios passed, of all. */
  passed: number;
  total: number;
  durationMs: number;
}

/** Options of {@link runEvals}. */
export interface RunEvalsOptions {
  scenarios: readonly EvalScenario[];
  model: ChatModel;
  /** What the report calls the model. @default `provider:modelId` */
  label?: string;
  /** @default evalScorers */
  scorers?: readonly EvalScorer[];
  /** Model steps per turn. @default 6 */
  stepBudget?: number;
  /** Prices each turn (`createPriceCatalogue()` of `@deskpilot/usage`): each result's cost. @default none */
  priceTurn?: PriceTurn;
  /** Told each scenario's result as it ends (a progress line). */
  onResult?: (result: EvalResult) => void;
}

const labelOf = (model: ChatModel) => `${model.provider}:${model.modelId}`;

/**
 * Runs a suite of scenarios through the real chat handler on one model, one after another, and
 * scores each run: the report a team compares before it switches models.
 *
 * @example
 * const report = await runEvals({ scenarios: supportScenarios, model: createDemoModel() });
 * console.log(formatReport(report));
 */
export async function runEvals(options: RunEvalsOptions): Promise<EvalReport> {
  const started = Date.now();
  const scorers = options.scorers ?? evalScorers;
  const results: EvalResult[] = [];
  for (const scenario of options.scenarios) {
    const run = await runScenario(scenario, {
      model: options.model,
      stepBudget: options.stepBudget,
      priceTurn: options.priceTurn,
    });
    const scores: EvalScore[] = [];
    for (const scorer of scorers) {
      const verdict = await scorer.score(run);
      if (verdict) scores.push({ scorer: scorer.name, ...verdict });
    }
    const cost: Record<string, number> = {};
    for (const request of run.requests)
      if (request.cost) cost[request.cost.currency] = (cost[request.cost.currency] ?? 0) + request.cost.amount;
    const result: EvalResult = {
      id: scenario.id,
      category: scenario.category,
      title: scenario.title,
      scores,
      passed: run.errors.length === 0 && scores.every((score) => score.pass),
      steps: run.requests.reduce((sum, request) => sum + request.steps, 0),
      tokens: run.requests.reduce((sum, request) => sum + (request.usage?.totalTokens ?? 0), 0),
      cost,
      durationMs: run.durationMs,
      errors: run.errors,
    };
    options.onResult?.(result);
    results.push(result);
  }
  return {
    model: options.label ?? labelOf(options.model),
    startedAt: new Date(started).toISOString(),
    results,
    passed: results.filter((result) => result.passed).length,
    total: results.length,
    durationMs: Date.now() - started,
  };
}

/** A report as a terminal table: one line per scenario, and each failed scorer's reason under it. */
export function formatReport(report: EvalReport): string {
  const width = Math.max(...report.results.map((result) => result.id.length), 8);
  const lines = [
    `${report.model}: ${report.passed}/${report.total} scenarios passed in ${(report.durationMs / 1000).toFixed(1)} s`,
  ];
  for (const result of report.results) {
    lines.push(
      `${result.passed ? 'pass' : 'FAIL'}  ${result.id.padEnd(width)}  ${String(result.steps).padStart(3)} steps  ${String(result.tokens).padStart(6)} tokens`,
    );
    for (const score of result.scores.filter((each) => !each.pass))
      lines.push(`        ${score.scorer}: ${score.reason}`);
    for (const error of result.errors) lines.push(`        error: ${error}`);
  }
  return lines.join('\n');
}
