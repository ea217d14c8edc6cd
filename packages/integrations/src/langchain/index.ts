// @mnemos/integrations/langchain: Mnemos memory for LangChain.js (`@langchain/core`): a retriever and a chat history.
export {
  MnemosRetriever,
  memoryDocument,
  type MnemosRetrieverInput,
  type MemoryDocumentMetadata,
} from './retriever.js';
export { MnemosChatMessageHistory, type MnemosChatMessageHistoryInput } from './chat-history.js';
export type { MemoryScope, RecallSettings } from '../shared/scope.js';
