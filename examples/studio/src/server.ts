import { startStudio } from './main.ts';
import { exitOnStartFailure } from '../../shared/start-failure.ts';

await startStudio(process.env).catch(exitOnStartFailure('studio'));
