import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDemoModel } from '@deskpilot/core/demo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJudgeScorer } from './judge-scorer.js';
import { runScenario } from './run-scenario.js';
import { supportScenarios } from './support-scenarios.js';

// An OpenAI-compatible judge on this machine: it answers autoevals' `select_choice` call with the choice
// the test sets, and keeps what it was asked.
let choice = 'C';
const asked: Array<{ model: string; messages: Array<{ content: string }> }> = [];
let server: Server;
let baseURL: string;
beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk));
    request.on('end', () => {
      asked.push(JSON.parse(body) as (typeof asked)[number]);
      const call = { reasons: `The judge chose ${choice}.`, choice };
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'judge-1',
          object: 'chat.completion',
          created: 0,
          model: 'judge',
          choices: [
            {
              index: 0,
              finish_reason: 'tool_calls',
              message: {
                role: 'assistant',
                content: null,
                tool_calls: [
                  { id: 't1', type: 'function', function: { name: 'select_choice', arguments: JSON.stringify(call) } },
                ],
              },
            },
          ],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the judge scorer', () => {
  const scenario = supportScenarios.find((each) => each.id === 'lookup/order-by-id')!;

  it('asks the judge model whether the answer agrees with what the tools returned, and passes or fails by its choice', async () => {
    const judge = createJudgeScorer({ apiKey: 'test-key', baseURL, model: 'judge-model' });
    const run = await runScenario(scenario, { model: createDemoModel() });
    choice = 'C';
    expect(await judge.score(run)).toEqual({
      pass: true,
      reason: 'consistent with the tool results (C): The judge chose C.',
    });
    // What the judge saw: the model it was told, the question, the answer and the order's record.
    const prompt = asked.at(-1)!;
    expect(prompt.model).toBe('judge-model');
    const shown = prompt.messages.map((message) => message.content).join('\n');
    expect(shown).toContain('show order ORD-1001');
    expect(shown).toContain('"orderId":"ORD-1001"');
    choice = 'D';
    expect(await judge.score(run)).toMatchObject({
      pass: false,
      reason: expect.stringMatching(/^contradicts the tool results \(D\)/),
    });
  });

  it('is not asked of a run whose tools returned nothing', async () => {
    const judge = createJudgeScorer({ apiKey: 'test-key', baseURL });
    const refusal = supportScenarios.find((each) => each.id === 'refusal/refund-without-the-right')!;
    const before = asked.length;
    expect(await judge.score(await runScenario(refusal, { model: createDemoModel() }))).toBeUndefined();
    expect(asked.length).toBe(before);
  });
});
