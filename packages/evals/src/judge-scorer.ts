import { finalText, type EvalScorer } from './eval-scorers.js';

/** Options of {@link createJudgeScorer}: an OpenAI-compatible endpoint and the judge model on it. */
export interface JudgeOptions {
  apiKey: string;
  /** An OpenAI-compatible server's base URL. @default OpenAI's */
  baseURL?: string;
  /** The judge model. @default autoevals' default */
  model?: string;
}

/** What a judge is shown of the tools' results, at most. */
const maxFactsChars = 8_000;

/**
 * A model-graded check of grounding, asked only when a judge model is configured: the final answer
 * against what the tools returned, by autoevals' `Factuality` (a maintained scorer library). It fails
 * when the judge finds the answer contradicts the results (choice D), and says why in the judge's own
 * words. A run whose tools returned nothing is not asked.
 */
export function createJudgeScorer(options: JudgeOptions): EvalScorer {
  return {
    name: 'judge',
    description: 'a judge model finds the answer consistent with what the tools returned (autoevals Factuality)',
    async score(run) {
      const facts = run.requests.flatMap((request) =>
        request.outputs.filter((output) => output.ok && output.value !== undefined).map((output) => output.value),
      );
      const output = finalText(run);
      if (facts.length === 0 || output === '') return undefined;
      const lastUser = run.scenario.turns.findLast((turn) => 'user' in turn);
      // Loaded with a judge only: a suite without one never loads the library or its client.
      const { Factuality } = await import('autoevals');
      const result = await Factuality({
        input: lastUser && 'user' in lastUser ? lastUser.user : '',
        output,
        expected: JSON.stringify(facts).slice(0, maxFactsChars),
        openAiApiKey: options.apiKey,
        ...(options.baseURL ? { openAiBaseUrl: options.baseURL } : {}),
        ...(options.model ? { model: options.model } : {}),
      });
      const metadata = (result.metadata ?? {}) as { choice?: string; rationale?: string };
      const pass = (result.score ?? 0) > 0;
      const why = String(metadata.rationale ?? '')
        .replace(/\s+/g, ' ')
        .slice(0, 300);
      return {
        pass,
        reason: `${pass ? 'consistent with' : 'contradicts'} the tool results (${metadata.choice ?? '?'}): ${why}`,
      };
    },
  };
}
