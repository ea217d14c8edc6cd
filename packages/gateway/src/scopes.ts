// The seven scopes a credential may hold, and what each allows (plans and quotas are in plans.ts).
export const SCOPES = [
  'memory:retain',
  'memory:recall',
  'memory:reflect',
  'memory:delete',
  'mcp',
  'project:read',
  'project:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'memory:retain': 'Store new memories and create or edit banks',
  'memory:recall': 'Search and list memories and banks',
  'memory:reflect': 'Ask for answers synthesised from memory',
  'memory:delete': 'Delete memories and banks',
  mcp: 'Connect through the Model Context Protocol endpoint',
  'project:read': 'Read the project usage and quotas',
  'project:write': 'Manage the project API keys and OAuth clients',
};

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}
