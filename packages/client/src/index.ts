export {
  createDeskpilotClient,
  type ChatContext,
  type ChatHistory,
  type ChatTransportOptions,
  type Conversation,
  type ConversationListItem,
  type ConversationPage,
  type DeskpilotClient,
  type DeskpilotClientOptions,
  type Passkey,
  type Session,
  type StepUpChallenge,
  type StepUpProofResponse,
  type TurnStatus,
} from './create-deskpilot-client.js';
export { DeskpilotClientError } from './deskpilot-client-error.js';
