// What the gateway says about itself in its OpenAPI document: the public base URL (the address clients use, which is
// not necessarily the console's) and the scopes with their descriptions.
import { useQuery } from '@tanstack/preact-query';
import { api } from './api';
import type { ScopeInfo } from './types';

interface OpenApiDocument {
  servers?: Array<{ url?: string }>;
  components?: {
    securitySchemes?: Record<string, { flows?: Record<string, { scopes?: Record<string, string> }> }>;
  };
}

export interface GatewayInfo {
  baseUrl: string;
  scopes: ScopeInfo[];
}

function infoOf(doc: OpenApiDocument): GatewayInfo {
  const server = doc.servers?.[0]?.url;
  const baseUrl = (server !== undefined && server !== '' ? server : window.location.origin).replace(/\/+$/, '');
  const scopes = doc.components?.securitySchemes?.['oauth2']?.flows?.['authorizationCode']?.scopes ?? {};
  return { baseUrl, scopes: Object.entries(scopes).map(([name, description]) => ({ name, description })) };
}

export function useGatewayInfo() {
  return useQuery({
    queryKey: ['gateway-info'],
    queryFn: async () => infoOf(await api<OpenApiDocument>('GET', '/openapi.json')),
    staleTime: Infinity,
  });
}
