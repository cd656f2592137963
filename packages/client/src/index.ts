export {
  createDeskpilotClient,
  type ChatContext,
  type ChatHistory,
  type ChatTransportOptions,
  type DeskpilotClient,
  type DeskpilotClientOptions,
  type Session,
} from './create-deskpilot-client.js';
export { DeskpilotClientError } from './deskpilot-client-error.js';
