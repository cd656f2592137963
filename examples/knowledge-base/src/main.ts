// `npm start -w examples/knowledge-base`: the knowledge base alone, on PORT (default 4370).
import { startKnowledgeBase } from './knowledge-base.ts';

const started = await startKnowledgeBase({ port: Number(process.env.PORT ?? 4370), host: process.env.HOST });
console.log(`knowledge base MCP server: ${started.url}`);
const stop = () => void started.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
