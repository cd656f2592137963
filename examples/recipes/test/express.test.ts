import { describeHostConformance } from '../conformance/describe-host-conformance.ts';
import { createExpressApp } from '../express/app.ts';
import { listen } from './listen.ts';

describeHostConformance('Express 5 with the adapters (the reference)', async (deskpilot) =>
  listen(createExpressApp(deskpilot)),
);
