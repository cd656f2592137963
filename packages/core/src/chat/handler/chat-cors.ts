import { createCorsPolicy, type CorsPolicy } from '../../http/create-cors-policy.js';

/** Response headers a page calling the chat must be able to read: the rate limit's and the stream's. */
export const chatExposedHeaders: readonly string[] = ['retry-after', 'ratelimit', 'ratelimit-policy', 'x-vercel-ai-ui-message-stream'];

/** The chat routes' CORS: pages of `allowedOrigins` may `POST` JSON and read {@link chatExposedHeaders}. */
export function createChatCors(allowedOrigins: Iterable<string>): CorsPolicy {
  return createCorsPolicy({ allowedOrigins, methods: ['POST'], allowedHeaders: ['content-type'], exposedHeaders: chatExposedHeaders, maxAgeSeconds: 600 });
}
