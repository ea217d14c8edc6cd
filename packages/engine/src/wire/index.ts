/**
 * The engine's request schemas, published as `@mnemos/engine/wire` for a server that fronts the engine (the gateway):
 * it validates the bodies, queries and paths it forwards with these, so it accepts exactly what the engine accepts and
 * refuses the rest with the same JSON pointers. Nothing here reaches beyond the schemas (no engine code is loaded).
 */
export {
  BANK_ID_PATTERN,
  BankBody,
  BankListQuery,
  BankPath,
  BulkDeleteBody,
  BulkGetBody,
  BulkUpdateBody,
  ClearQuery,
  ExportQuery,
  ImportQuery,
  MemoryListQuery,
  MemoryPatchBody,
  MemoryPath,
  OperationPath,
  RecallBody,
  RecallWithBankBody,
  ReflectBody,
  ReflectWithBankBody,
  RetainBody,
  RetainWithBankBody,
  SPACE_PATTERN,
  SpacePath,
} from './schemas.js';
export { EntityListQuery, EntityPath, EntityQuery } from './entity-schemas.js';
