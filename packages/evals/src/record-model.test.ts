import { createDemoModel } from '@deskpilot/core/demo';
import { describe, expect, it } from 'vitest';
import type { EvalScenario } from './eval-scenario.js';
import { compareReports, reportHtml } from './eval-report.js';
import {
  emptyFixtures,
  recordingModel,
  replayingModel,
  type EvalFixtures,
  type LanguageModelV4,
} from './record-model.js';
import { runEvals } from './run-evals.js';
import { supportScenarios } from './support-scenarios.js';

/** The reports without their clocks: what a replay must reproduce. */
const outcomes = (report: Awaited<ReturnType<typeof runEvals>>) =>
  report.results.map(({ id, passed, scores, steps, tokens }) => ({ id, passed, scores, steps, tokens }));

/** The demo model with a provider's habit: every tool call a random id (which the next prompt then carries). */
function randomIds(model: LanguageModelV4): LanguageModelV4 {
  return {
    ...model,
    async doStream(options) {
      const result = await model.doStream(options);
      const ids = new Map<string, string>();
      const fresh = (id: string) => ids.get(id) ?? (ids.set(id, `call_${crypto.randomUUID()}`), ids.get(id)!);
      const stream = result.stream.pipeThrough(
        new TransformStream({
          transform(part, controller) {
            controller.enqueue('toolCallId' in part ? { ...part, toolCallId: fresh(part.toolCallId) } : part);
          },
        }),
      );
      return { ...result, stream };
    },
  };
}

describe('record and replay', () => {
  it('replays a provider whose tool calls have random ids, two scenarios sending one prompt included', async () => {
    const fixtures = emptyFixtures('deskpilot:offline-demo');
    const recorded = await runEvals({
      scenarios: supportScenarios,
      model: recordingModel(randomIds(createDemoModel()), fixtures),
    });
    const replayed = await runEvals({
      scenarios: supportScenarios,
      model: replayingModel(JSON.parse(JSON.stringify(fixtures)) as EvalFixtures),
    });
    expect(outcomes(replayed)).toEqual(outcomes(recorded));
    expect(replayed.passed).toBe(replayed.total);
  });

  it('records a run and replays it offline, call for call, from fixtures kept as JSON', async () => {
    const scenarios = supportScenarios.filter((scenario) =>
      ['write/refund-approved', 'language/german-order', 'injection/ticket-asks-for-a-refund'].includes(scenario.id),
    );
    const fixtures = emptyFixtures('deskpilot:offline-demo');
    const recorded = await runEvals({ scenarios, model: recordingModel(createDemoModel(), fixtures) });
    expect(Object.keys(fixtures.calls).length).toBeGreaterThanOrEqual(6);
    // Kept on disk between the two runs.
    const kept = JSON.parse(JSON.stringify(fixtures)) as EvalFixtures;
    const replayed = await runEvals({ scenarios, model: replayingModel(kept) });
    expect(replayed.model).toBe('deskpilot:offline-demo');
    expect(outcomes(replayed)).toEqual(outcomes(recorded));
  });

  it('fails a replay whose prompt changed since it was recorded, saying so', async () => {
    const [scenario] = supportScenarios.filter((each) => each.id === 'lookup/order-by-id');
    const fixtures = emptyFixtures('deskpilot:offline-demo');
    await runEvals({ scenarios: [scenario!], model: recordingModel(createDemoModel(), fixtures) });
    const changed: EvalScenario = { ...scenario!, turns: [{ user: 'show order ORD-1002' }] };
    const report = await runEvals({ scenarios: [changed], model: replayingModel(fixtures) });
    expect(report.results[0]!.passed).toBe(false);
    expect(report.results[0]!.errors.join()).toContain('No recorded call of deskpilot:offline-demo for this prompt');
  });
});

describe('reports', () => {
  it('lays two runs side by side in one HTML page, escaping what the models wrote', async () => {
    const scenarios = supportScenarios.slice(0, 3);
    const before = await runEvals({ scenarios, model: createDemoModel(), label: 'model <A>' });
    const after = {
      ...before,
      model: 'model B',
      passed: 2,
      results: before.results.map((result, index) =>
        index === 0
          ? { ...result, passed: false, scores: [{ scorer: 'grounded', pass: false, reason: 'did not say <script>' }] }
          : result,
      ),
    };
    const html = reportHtml([before, after]);
    expect(html).toContain('<th>model &#60;A&#62;<small>3/3 passed');
    expect(html).toContain('<b>grounded</b>: did not say &#60;script&#62;');
    expect(html).not.toContain('<script>');
    expect(compareReports(before, after)).toBe(
      [
        'model <A> → model B: 3/3 → 2/3 scenarios passed',
        `broken  ${scenarios[0]!.id}`,
        '        grounded: did not say <script>',
        `tokens: ${before.results.reduce((sum, result) => sum + result.tokens, 0)} → ${before.results.reduce((sum, result) => sum + result.tokens, 0)}`,
      ].join('\n'),
    );
  });
});
