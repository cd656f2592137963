import { describeHostConformance } from '../conformance/describe-host-conformance.ts';
import { createFastifyApp } from '../fastify/app.ts';

describeHostConformance('Fastify 5', async (deskpilot) => {
  const app = createFastifyApp(deskpilot);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  // Keep-alive connections of the suite's fetches would hold close() open.
  return {
    url,
    close: async () => {
      app.server.closeAllConnections();
      await app.close();
    },
  };
});
