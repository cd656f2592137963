export {
  fromNodeRequest,
  type FromNodeRequestOptions,
  type NodeRequestLike,
  type NodeSocketLike,
} from './from-node-request.js';
export { writeResponse, type NodeResponseLike } from './write-response.js';
