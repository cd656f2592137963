/**
 * The Node request/response translation, for adapters on `node:http` and the frameworks built on it
 * (Express, Fastify, Koa).
 *
 * @example
 * import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
 * createServer(async (req, res) => writeResponse(res, await handler.handle(fromNodeRequest(req, req.url!.split('?')[0]!))));
 */
export * from './node/index.js';
