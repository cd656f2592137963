export { defaultBudgetNotice, runToolLoop, type RunToolLoopOptions, type RunToolLoopResult } from './run-tool-loop.js';
