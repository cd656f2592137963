import { startSessionServer } from './main.ts';
import { exitOnStartFailure } from '../../shared/start-failure.ts';

await startSessionServer(process.env).catch(exitOnStartFailure('session-server'));
