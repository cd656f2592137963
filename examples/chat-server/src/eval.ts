// The support eval suite (`@deskpilot/evals`) on the model this server is configured with, through the
// real chat handler: the same provider variables (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_API_MODE,
// OPENAI_MODEL, ANTHROPIC_API_KEY, ANTHROPIC_MODEL, MODEL_PRICES), the offline demo model without a key.
//   npm run eval -- [--provider openai|anthropic] [--out DIR]
//     [--record FILE | --replay FILE] [--compare REPORT.json] [--judge MODEL]
// --judge adds a model-graded check of grounding, on JUDGE_API_KEY and JUDGE_BASE_URL (OpenAI-compatible;
// OPENAI_API_KEY and OPENAI_BASE_URL unless set).
// Prints the table, writes the report as JSON and HTML into DIR (default `eval-reports`), and exits 1
// when a scenario failed.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  compareReports,
  createJudgeScorer,
  emptyFixtures,
  evalScorers,
  formatReport,
  recordingModel,
  replayingModel,
  reportHtml,
  runEvals,
  supportScenarios,
  type EvalFixtures,
  type EvalReport,
  type LanguageModelV4,
} from '@deskpilot/evals';
import { createPriceCatalogue } from '@deskpilot/usage';
import { modelsFrom } from './app.ts';
import { readConfig } from './config.ts';

const { values } = parseArgs({
  options: {
    provider: { type: 'string' },
    out: { type: 'string', default: 'eval-reports' },
    record: { type: 'string' },
    replay: { type: 'string' },
    compare: { type: 'string' },
    judge: { type: 'string' },
  },
});

/** The model under test: the replayed recording, else the configured provider's (or the fallback). */
function modelUnderTest(): { model: LanguageModelV4; fixtures?: EvalFixtures } {
  if (values.provider !== undefined && values.provider !== 'openai' && values.provider !== 'anthropic')
    throw new Error(`--provider ${values.provider}: the providers are openai and anthropic`);
  if (values.replay && values.record)
    throw new Error('--record and --replay: give one (a replay calls no provider to record)');
  if (values.replay) return { model: replayingModel(JSON.parse(readFileSync(values.replay, 'utf8')) as EvalFixtures) };
  const models = modelsFrom(readConfig(process.env));
  const chosen =
    values.provider === 'openai' ? models.openai : values.provider === 'anthropic' ? models.anthropic : models.fallback;
  if (!chosen) throw new Error(`--provider ${values.provider}: that provider has no key (see the server's README)`);
  const model = chosen as LanguageModelV4;
  if (!values.record) return { model };
  const fixtures = emptyFixtures(`${model.provider}:${model.modelId}`);
  return { model: recordingModel(model, fixtures), fixtures };
}

let underTest: ReturnType<typeof modelUnderTest>;
let config: ReturnType<typeof readConfig>;
try {
  config = readConfig(process.env);
  underTest = modelUnderTest();
} catch (error) {
  // A configuration the command cannot run with: said plainly, no stack.
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
const { model, fixtures } = underTest;
const judgeKey = process.env.JUDGE_API_KEY ?? process.env.OPENAI_API_KEY;
if (values.judge && !judgeKey) {
  process.stderr.write('--judge needs JUDGE_API_KEY (or OPENAI_API_KEY)\n');
  process.exit(1);
}
const judgeBaseURL = process.env.JUDGE_BASE_URL ?? process.env.OPENAI_BASE_URL;
const scorers = values.judge
  ? [
      ...evalScorers,
      createJudgeScorer({ apiKey: judgeKey!, model: values.judge, ...(judgeBaseURL ? { baseURL: judgeBaseURL } : {}) }),
    ]
  : evalScorers;
const report = await runEvals({
  scenarios: supportScenarios,
  model,
  scorers,
  stepBudget: config.STEP_BUDGET,
  priceTurn: createPriceCatalogue({ prices: config.MODEL_PRICES ?? {} }),
  onResult: (result) => process.stderr.write(`${result.passed ? '.' : 'F'}`),
});
process.stderr.write('\n');
const before = values.compare ? (JSON.parse(readFileSync(values.compare, 'utf8')) as EvalReport) : undefined;
mkdirSync(values.out, { recursive: true });
const name = `${report.model.replace(/[^\w.-]+/g, '_')}-${report.startedAt.replace(/[:.]/g, '-')}`;
writeFileSync(join(values.out, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(values.out, `${name}.html`), reportHtml(before ? [before, report] : [report]));
if (fixtures && values.record) writeFileSync(values.record, `${JSON.stringify(fixtures)}\n`);
process.stdout.write(`${formatReport(report)}\n`);
if (before) process.stdout.write(`\n${compareReports(before, report)}\n`);
process.stdout.write(`\nreport: ${join(values.out, `${name}.json`)} and .html\n`);
process.exitCode = report.passed === report.total ? 0 : 1;
