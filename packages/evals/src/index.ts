export type { EvalCategory, EvalExpectations, EvalScenario, EvalTurn, ExpectedCall } from './eval-scenario.js';
export {
  runScenario,
  type EvalCall,
  type EvalRequest,
  type EvalRun,
  type EvalWrite,
  type RunScenarioOptions,
} from './run-scenario.js';
export {
  approvalRespected,
  argumentsMatch,
  asksFirst,
  evalScorers,
  grounded,
  languageKept,
  languageOf,
  noForbiddenTool,
  noUnapprovedWrite,
  toolChosen,
  tokensBounded,
  withinBudget,
  finalText,
  type EvalScore,
  type EvalScorer,
  type EvalVerdict,
} from './eval-scorers.js';
export { formatReport, runEvals, type EvalReport, type EvalResult, type RunEvalsOptions } from './run-evals.js';
export { supportScenarios } from './support-scenarios.js';
export { compareReports, reportHtml } from './eval-report.js';
export {
  callKey,
  emptyFixtures,
  recordingModel,
  replayingModel,
  type EvalFixtures,
  type LanguageModelV4,
} from './record-model.js';
export { createJudgeScorer, type JudgeOptions } from './judge-scorer.js';
