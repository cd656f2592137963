import { createCorsPolicy, type CorsPolicy } from '../../http/create-cors-policy.js';
import { chatContextHeader } from './resume-route.js';

/** Response headers a page calling the chat must be able to read: the rate limit's and the stream's. */
export const chatExposedHeaders: readonly string[] = [
  'retry-after',
  'ratelimit',
  'ratelimit-policy',
  'x-vercel-ai-ui-message-stream',
];

/** What a host may add to the chat's CORS (`createChatHandler({ cors })`). */
export interface ChatCorsOptions {
  /** Request headers a page may send besides `content-type` (`x-request-id`, `authorization`…). @default [] */
  allowedHeaders?: readonly string[];
  /**
   * Let pages send their cookies (`credentials: 'include'`): for a host whose `resolveContext` reads
   * its session cookie while the page is on another origin of the same site. @default false
   */
  credentials?: boolean;
}

/** The chat routes' CORS: pages of `allowedOrigins` may `POST` JSON and read {@link chatExposedHeaders}. */
export function createChatCors(allowedOrigins: Iterable<string>, options: ChatCorsOptions = {}): CorsPolicy {
  const allowedHeaders = [
    ...new Set([
      'content-type',
      chatContextHeader,
      ...(options.allowedHeaders ?? []).map((name) => name.trim().toLowerCase()),
    ]),
  ];
  return createCorsPolicy({
    allowedOrigins,
    // GET: a reconnect to a running answer (`/chat/:sessionId/stream`).
    methods: ['GET', 'POST'],
    allowedHeaders,
    exposedHeaders: chatExposedHeaders,
    maxAgeSeconds: 600,
    credentials: options.credentials,
  });
}
