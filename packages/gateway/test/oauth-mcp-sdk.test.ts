// A real MCP client's OAuth flow against the real gateway and engine, with the official SDK's helpers: discovery
// (protected-resource and authorization-server metadata), dynamic registration with `scope`, authorization (the
// sign-in and consent pages completed over HTTP as a browser would), the PKCE token exchange, then MCP tool calls
// through the gateway with that token, refused where the token lacks the tool's scope.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { setupProject, startHarness, startTestEngine, type EngineHandle, type Harness } from './helpers.js';
import { openSignIn, PASSWORD, REDIRECT, signInAndConsent } from './oauth-browser.js';

/** An MCP client's credential store, in memory; the authorization URL is kept for the test to follow. */
class MemoryOAuthProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  constructor(private readonly scope?: string) {}
  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK test client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(this.scope === undefined ? {} : { scope: this.scope }),
    };
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}

const textOf = (result: unknown): string => JSON.stringify(result);

describe('MCP client OAuth flow through the gateway (official SDK)', () => {
  let engine: EngineHandle;
  let h: Harness;
  let email: string;
  let projectId: string;

  before(async () => {
    engine = await startTestEngine();
    h = await startHarness(engine.url);
    email = `mcp${randomBytes(3).toString('hex')}@example.com`;
    projectId = (await setupProject(h.url, { email, password: PASSWORD })).projectId;
  });
  after(async () => {
    await h.close();
    await engine.close();
  });

  /** Completes the sign-in and consent pages for an authorization URL the SDK produced; returns the code. */
  async function approve(authorizationUrl: URL | undefined, scopes: string[]): Promise<string> {
    assert.ok(authorizationUrl !== undefined, 'the SDK asked to open the authorization page');
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
    const { browser, uid } = await openSignIn(h.url, authorizationUrl.toString());
    const back = await signInAndConsent(browser, uid, email, projectId, scopes);
    assert.equal(back.origin + back.pathname, REDIRECT);
    return back.searchParams.get('code') ?? '';
  }

  it('connects as an MCP client does on a 401: registers, authorizes, then retains and recalls', async () => {
    const provider = new MemoryOAuthProvider();
    const mcpUrl = new URL(`${h.url}/mcp`);
    const first = new Client({ name: 'sdk-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await assert.rejects(first.connect(transport), UnauthorizedError);
    const registered = provider.clientInformation();
    assert.ok(registered !== undefined && registered.client_id.length > 0, 'the client registered dynamically');
    // The scopes named by the 401 are registered and asked for: mcp plus the memory scopes, not the project ones.
    const asked = (provider.authorizationUrl?.searchParams.get('scope') ?? '').split(' ').sort();
    assert.deepEqual(asked, ['mcp', 'memory:delete', 'memory:recall', 'memory:reflect', 'memory:retain']);
    assert.equal(provider.authorizationUrl?.searchParams.get('resource'), mcpUrl.href);

    await transport.finishAuth(await approve(provider.authorizationUrl, asked));
    assert.deepEqual(provider.tokens()?.scope?.split(' ').sort(), asked);

    const client = new Client({ name: 'sdk-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const content = 'The SDK user keeps bees on the roof.';
    const retained = await client.callTool({ name: 'retain', arguments: { bank_id: 'sdk-bank', content } });
    assert.notEqual(retained.isError, true, textOf(retained));
    const recalled = await client.callTool({ name: 'recall', arguments: { bank_id: 'sdk-bank', query: 'bees' } });
    assert.notEqual(recalled.isError, true, textOf(recalled));
    assert.match(textOf(recalled), /bees/);
    await client.close();
  });

  it('refuses a tool outside the scopes a client registered and was granted', async () => {
    const provider = new MemoryOAuthProvider('mcp memory:recall');
    const serverUrl = `${h.url}/mcp`;
    // A client configured with its own, narrower scope (the SDK's auth() entry point, as its examples use it).
    assert.equal(await auth(provider, { serverUrl, scope: 'mcp memory:recall' }), 'REDIRECT');
    const code = await approve(provider.authorizationUrl, ['mcp', 'memory:recall']);
    const exchanged = await auth(provider, { serverUrl, authorizationCode: code, scope: 'mcp memory:recall' });
    assert.equal(exchanged, 'AUTHORIZED');
    assert.deepEqual(provider.tokens()?.scope?.split(' ').sort(), ['mcp', 'memory:recall']);

    const client = new Client({ name: 'sdk-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
    const recalled = await client.callTool({ name: 'recall', arguments: { bank_id: 'sdk-bank', query: 'bees' } });
    assert.notEqual(recalled.isError, true, textOf(recalled));
    await assert.rejects(
      client.callTool({ name: 'retain', arguments: { bank_id: 'sdk-bank', content: 'not allowed' } }),
      (err: unknown) => err instanceof Error && /insufficient_scope|403|memory:retain/.test(err.message),
    );
    const listed = await client.callTool({ name: 'list_memories', arguments: { bank_id: 'sdk-bank' } });
    assert.doesNotMatch(textOf(listed), /not allowed/, 'the refused retain stored nothing');
    await client.close();
  });
});
