// @deskpilot/core/storage: what a store on a SQL database needs beyond the ports — checked reads of
// the rows it returns, in the column layout the Postgres and SQLite stores share. Imports nothing of
// the chat's run time: a session-only process may load it.
export {
  accountFromRow,
  accountTokenColumns,
  accountTokenFromRow,
  approvalColumns,
  approvalFromRow,
  approvalRowValues,
  auditColumns,
  auditFromRow,
  auditRowValues,
  chatSessionColumns,
  chatSessionFromRow,
  firstMessageParent,
  freezeAccount,
  invitationColumns,
  invitationFromRow,
  invitationRowValues,
  isJsonObject,
  isOnActiveBranch,
  isJsonValue,
  isRecordOf,
  isStoredMessage,
  messageFromRow,
  messagePreview,
  messageTreeFromRows,
  outcomeJson,
  readStoredRow,
  rolePolicyFromRow,
  sessionColumns,
  sessionFromRow,
  stepUpRowValues,
  type StoredRow,
  type StoredRowOptions,
  type StoredRowReader,
} from './storage/stored-rows.js';
// A one-time secret's purpose, checked when a record is created (as the memory store does).
export { checkAccountTokenPurpose } from './session/account-token-store.js';
// Text a SQL key cannot hold as given (NUL, a lone surrogate): a store answers it "not found".
export { canBeStored } from './storage/storable-text.js';
// A feature module's schema, checked before a SQL store migrates it.
export { checkModuleSchemas, type ModuleSchemaLike } from './storage/module-schemas.js';
// The error an audit append answers when a row was stored past the head behind the trail's back.
export { auditSeqTaken } from './audit/audit-store.js';
export { branchTo, type MessageTree, type TreeMessage } from './chat/conversation/message-tree.js';
