// Shapes of the gateway answers the console reads (the parts it shows).

export interface Account {
  id: string;
  email: string;
}

export interface SessionAnswer {
  account: Account;
  csrf_token: string;
}

export interface Project {
  id: string;
  name: string;
  plan: string;
  tenant: string;
  created_at: string;
}

export interface ApiKey {
  id: string;
  name: string | null;
  prefix: string;
  scopes: string[];
  banks: string[] | null;
  spaces: string[] | null;
  created_at: string;
  last_used_at?: string | null;
  expires_at: string | null;
  revoked_at?: string | null;
}

export interface CreatedKey extends ApiKey {
  key: string;
}

export interface OAuthClient {
  client_id: string;
  name: string | null;
  scopes: string[];
  redirect_uris: string[];
  grant_types: string[];
  created_at: string;
}

export interface CreatedClient extends OAuthClient {
  client_secret?: string;
}

export interface Counter {
  used: number;
  limit: number;
}

export interface DailyUsage {
  date: string;
  memories: number;
  recalls: number;
  reflects: number;
}

export interface Usage {
  period: string;
  resets_at: string;
  plan: string;
  memories: Counter;
  recalls: Counter;
  reflects: Counter;
  /** Per-day counts of the month, when the gateway reports them. */
  daily?: DailyUsage[];
}

export interface Bank {
  bank_id: string;
  name: string;
  mission: string;
  space: string;
  memory_count: number;
  created_at: string;
  last_write_at: string | null;
}

export interface BankList {
  banks: Bank[];
  total: number;
  limit: number;
  offset: number;
}

export interface Memory {
  id: string;
  bank_id: string;
  space: string;
  type: string;
  text: string;
  context: string | null;
  metadata: Record<string, unknown>;
  tags: string[];
  entities: string[];
  document_id: string | null;
  source_id: string | null;
  occurred_at: string | null;
  created_at: string;
  updated_at: string;
  state: string;
  superseded_by: string | null;
  valid_from: string;
  valid_to: string | null;
  /** When it is forgotten; null while it is kept. */
  expires_at: string | null;
}

/** One version of a memory (`GET .../memories/{id}/history`); a deleted memory's versions keep no text. */
export interface MemoryVersion {
  version: number;
  change: string;
  text: string | null;
  state: string;
  valid_from: string;
  valid_to: string | null;
  superseded_by: string | null;
  changed_at: string;
}

export interface MemoryList {
  items: Memory[];
  total: number;
  limit: number;
  offset: number;
}

export interface RecallHit extends Memory {
  score: number;
  scores: Record<string, number>;
  org?: boolean;
}

export interface RecallAnswer {
  results: RecallHit[];
  usage: { tokens: number };
  trace?: Record<string, unknown>;
}

export interface ReflectAnswer {
  text: string;
  citations: string[];
}

export interface RetainAnswer {
  success: boolean;
  bank_id: string;
  items_count: number;
  memory_ids: string[];
}

export interface ScopeInfo {
  name: string;
  description: string;
}

export interface Interaction {
  client: { id: string; name: string };
  scopes: ScopeInfo[];
  prompt: 'login' | 'consent';
  /** The one project a project's own OAuth client may be authorized for; null lets the person choose. */
  project_id?: string | null;
}

/** POST .../import: what an import stored, what it skipped as already there, and the lines it could not take. */
export interface ImportAnswer {
  imported: number;
  skipped: number;
  failed: Array<{ line: number; problem: string }>;
}
