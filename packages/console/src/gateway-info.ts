// What the gateway says about itself in its OpenAPI document: the public base URL (the address clients use, which is
// not necessarily the console's), the scopes with their descriptions, and the scopes a new API key gets by default.
import { useQuery } from '@tanstack/preact-query';
import { api } from './api';
import type { ScopeInfo } from './types';

interface OpenApiDocument {
  servers?: Array<{ url?: string }>;
  components?: {
    securitySchemes?: Record<
      string,
      { flows?: Record<string, { scopes?: Record<string, string> }>; 'x-default-scopes'?: string[] }
    >;
  };
}

export interface GatewayInfo {
  baseUrl: string;
  scopes: ScopeInfo[];
  /** The scopes an API key gets when its creation names none: the key form starts from them. */
  defaultKeyScopes: string[];
}

function infoOf(doc: OpenApiDocument): GatewayInfo {
  const server = doc.servers?.[0]?.url;
  const baseUrl = (server !== undefined && server !== '' ? server : window.location.origin).replace(/\/+$/, '');
  const scopes = doc.components?.securitySchemes?.['oauth2']?.flows?.['authorizationCode']?.scopes ?? {};
  return {
    baseUrl,
    scopes: Object.entries(scopes).map(([name, description]) => ({ name, description })),
    defaultKeyScopes: doc.components?.securitySchemes?.['apiKey']?.['x-default-scopes'] ?? [],
  };
}

export function useGatewayInfo() {
  return useQuery({
    queryKey: ['gateway-info'],
    queryFn: async () => infoOf(await api<OpenApiDocument>('GET', '/openapi.json')),
    staleTime: Infinity,
  });
}
