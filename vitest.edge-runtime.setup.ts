// Setup of the `edge-runtime` vitest project: fail every file at once if the environment did not
// take, so the handler suites cannot pass there on Node's own globals by mistake.
if ((globalThis as { EdgeRuntime?: unknown }).EdgeRuntime !== 'edge-runtime') {
  throw new Error('the edge-runtime project is not running in the Edge Runtime environment');
}
