import { DeskpilotError } from '@deskpilot/core/session';

/** What {@link checkRedisReady} needs of a node-redis client. */
export interface RedisPingClient {
  readonly isReady: boolean;
  ping(): Promise<string>;
}

/**
 * Resolves when Redis answers a `PING`; rejects with `store_unavailable` at once while the client is
 * reconnecting (node-redis would queue the command until the connection is back), and bounded by the
 * caller otherwise (see `createReadinessCheck`): a server that accepts and never answers hangs a `PING`.
 *
 * @example
 * const readiness = createReadinessCheck({ checks: { redis: () => checkRedisReady(redis) } });
 */
export async function checkRedisReady(client: RedisPingClient): Promise<void> {
  if (!client.isReady) throw new DeskpilotError('store_unavailable', { detail: 'Redis is not connected.' });
  const answer = await client.ping();
  if (answer !== 'PONG')
    throw new DeskpilotError('store_unavailable', { detail: 'Redis did not answer PING with PONG.' });
}
