import { startChatServer } from './main.ts';
import { exitOnStartFailure } from '../../shared/start-failure.ts';

await startChatServer(process.env).catch(exitOnStartFailure('chat-server'));
