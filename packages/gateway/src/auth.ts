// Credential resolution: API keys (`mnm_live_...`) and OAuth 2.0 access tokens, both resolved to a Principal bound to
// one project. Lookups are cached in memory so the hot path costs no database round trip; every revocation evicts
// locally at once and is broadcast to the other gateways over Postgres LISTEN/NOTIFY. A short TTL bounds staleness if a
// notification is ever missed.
import type { Pool } from './db.js';
import { constantTimeEqual, hashSecret, isWellFormedKey, KEY_PREFIX, keyPrefix } from './ids.js';
import { problem } from '@mnemos/problems';
import { insufficientScope } from './problem.js';
import { listen, notify, type Listener } from './notification-store.js';
import type { ApiKeyRow, ClientLimits, Project, Store } from './store.js';
import type { Scope } from './scopes.js';

export interface Principal {
  kind: 'key' | 'oauth' | 'session';
  /** Key id, the OAuth client id, or the signed-in account's id (console session). */
  id: string;
  project: Project;
  scopes: ReadonlySet<string>;
  banks: ReadonlySet<string> | null;
  spaces: ReadonlySet<string> | null;
  /** When the credential stops working (a key's expiry, an OAuth client's); null: never. */
  expiresAt: Date | null;
  /** Bucket identity for per-credential rate limits. */
  rateKey: string;
  rateLimitPerMinute: number | null;
}

export interface ResolvedToken {
  jti: string;
  clientId: string;
  grantId: string | undefined;
  projectId: string;
  scopes: string[];
  /** Seconds since the epoch. */
  exp: number;
}

export type TokenResolver = (token: string) => Promise<ResolvedToken | undefined>;

/** A resolved token with the limits of the client it was issued to (cached together). */
interface TokenEntry extends ResolvedToken {
  limits: ClientLimits;
}

const CHANNEL = 'mnemos_gateway';
const TTL_MS = 30_000;
const NEGATIVE_TTL_MS = 5_000;

interface Cached<T> {
  value: T;
  at: number;
}

export class Authenticator {
  private readonly keys = new Map<string, Cached<ApiKeyRow | null>>();
  private readonly tokens = new Map<string, Cached<TokenEntry | null>>();
  private readonly projects = new Map<string, Cached<Project | null>>();
  private readonly lastUsed = new Map<string, Date>();
  private listener: Listener | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly channels = new Map<string, (payload: string) => void>();
  tokenResolver: TokenResolver | undefined;
  /** Called when a project's settings (plan, quotas, engine) changed, here or on another gateway. */
  onProjectChanged: ((projectId: string) => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly pool: Pool,
    private readonly databaseUrl: string,
  ) {}

  /** Delivers the notifications of another channel over this gateway's one listening connection (before start). */
  subscribe(channel: string, handler: (payload: string) => void): void {
    this.channels.set(channel, handler);
  }

  async start(): Promise<void> {
    await this.listen();
    this.flushTimer = setInterval(() => {
      void this.flushLastUsed();
    }, 10_000);
    this.flushTimer.unref();
  }

  private async listen(): Promise<void> {
    if (this.closed) return;
    this.listener = await listen(this.databaseUrl, [CHANNEL, ...this.channels.keys()], {
      notification: (channel, payload) => {
        if (channel === CHANNEL) this.evict(payload ?? 'all', false);
        else this.channels.get(channel)?.(payload ?? '');
      },
      lost: (listener) => {
        // Lost the notification channel: drop every cached credential and reconnect.
        this.clearAll();
        if (this.listener === listener) this.listener = undefined;
        setTimeout(() => {
          this.listen().catch(() => undefined);
        }, 1_000).unref();
      },
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.flushTimer !== undefined) clearInterval(this.flushTimer);
    await this.flushLastUsed().catch(() => undefined);
    await this.listener?.end().catch(() => undefined);
  }

  private clearAll(): void {
    this.keys.clear();
    this.tokens.clear();
    this.projects.clear();
  }

  /**
   * Forgets cached state named by an event (`key:<prefix>`, `project:<id>`, `token:<jti>`, `grant:<id>`,
   * `client:<id>`, `all`) here, and, when `broadcast`, in every other gateway.
   */
  evict(event: string, broadcast = true): void {
    const [kind, id] = [event.slice(0, event.indexOf(':')), event.slice(event.indexOf(':') + 1)];
    if (event === 'all') this.clearAll();
    else if (kind === 'key') this.keys.delete(id);
    else if (kind === 'project') {
      this.projects.delete(id);
      this.onProjectChanged?.(id);
      for (const [k, v] of this.keys) if (v.value?.project_id === id) this.keys.delete(k);
      for (const [k, v] of this.tokens) if (v.value?.projectId === id) this.tokens.delete(k);
    } else if (kind === 'token' || kind === 'grant' || kind === 'client') {
      for (const [k, v] of this.tokens) {
        const t = v.value;
        if (t === null) continue;
        if (
          (kind === 'token' && t.jti === id) ||
          (kind === 'grant' && t.grantId === id) ||
          (kind === 'client' && t.clientId === id)
        ) {
          this.tokens.delete(k);
        }
      }
    }
    if (broadcast) notify(this.pool, CHANNEL, event).catch(() => undefined);
  }

  async project(id: string): Promise<Project | undefined> {
    const now = Date.now();
    const hit = this.projects.get(id);
    if (hit !== undefined && now - hit.at < TTL_MS) return hit.value ?? undefined;
    const project = await this.store.getProject(id);
    this.projects.set(id, { value: project ?? null, at: now });
    return project;
  }

  /** Resolves the Authorization header to a principal, or throws a 401 problem. */
  async authenticate(header: string | undefined): Promise<Principal> {
    if (header === undefined || header.length === 0) {
      throw problem('unauthorized', 'noCredential');
    }
    const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
    const credential = m?.[1];
    if (credential === undefined) {
      throw problem('unauthorized', 'notBearer');
    }
    if (credential.startsWith(KEY_PREFIX)) return this.fromKey(credential);
    return this.fromToken(credential);
  }

  private async fromKey(key: string): Promise<Principal> {
    if (!isWellFormedKey(key)) {
      throw problem('unauthorized', 'malformedKey');
    }
    const prefix = keyPrefix(key);
    const now = Date.now();
    let hit = this.keys.get(prefix);
    const ttl = hit?.value === null ? NEGATIVE_TTL_MS : TTL_MS;
    if (hit === undefined || now - hit.at >= ttl) {
      hit = { value: (await this.store.findKeyByPrefix(prefix)) ?? null, at: now };
      this.keys.set(prefix, hit);
    }
    const row = hit.value;
    if (row === null || !constantTimeEqual(hashSecret(key), row.hash)) {
      throw problem('unauthorized', 'unknownKey');
    }
    if (row.revoked_at !== null) throw problem('unauthorized', 'revokedKey');
    if (row.expires_at !== null && row.expires_at.getTime() <= now) throw problem('unauthorized', 'expiredKey');
    const project = await this.project(row.project_id);
    if (project === undefined) throw problem('unauthorized', 'unknownKey');
    this.lastUsed.set(row.id, new Date(now));
    return {
      kind: 'key',
      id: row.id,
      project,
      scopes: new Set(row.scopes),
      banks: row.banks === null ? null : new Set(row.banks),
      spaces: row.spaces === null ? null : new Set(row.spaces),
      expiresAt: row.expires_at,
      rateKey: `key:${row.id}`,
      rateLimitPerMinute: row.rate_limit_per_minute,
    };
  }

  private async fromToken(token: string): Promise<Principal> {
    if (token.length > 512 || !/^[A-Za-z0-9._~+/=-]+$/.test(token) || this.tokenResolver === undefined) {
      throw problem('unauthorized', 'malformedToken');
    }
    const now = Date.now();
    let hit = this.tokens.get(token);
    const ttl = hit?.value === null ? NEGATIVE_TTL_MS : TTL_MS;
    if (hit === undefined || now - hit.at >= ttl) {
      hit = { value: await this.resolveToken(token), at: now };
      this.tokens.set(token, hit);
      if (this.tokens.size > 100_000) this.tokens.delete(this.tokens.keys().next().value ?? '');
    }
    const t = hit.value;
    if (t === null) throw problem('unauthorized', 'unknownToken');
    if (t.exp * 1000 <= now) {
      this.tokens.delete(token);
      throw problem('unauthorized', 'expiredToken');
    }
    const { banks, spaces, expires_at: clientExpiry } = t.limits;
    if (clientExpiry !== null && clientExpiry.getTime() <= now) {
      throw problem('unauthorized', 'clientExpired');
    }
    const project = await this.project(t.projectId);
    if (project === undefined) throw problem('unauthorized', 'unknownToken');
    return {
      kind: 'oauth',
      id: t.clientId,
      project,
      scopes: new Set(t.scopes),
      banks: banks === null ? null : new Set(banks),
      spaces: spaces === null ? null : new Set(spaces),
      expiresAt: clientExpiry,
      rateKey: `client:${t.clientId}:${t.projectId}`,
      rateLimitPerMinute: null,
    };
  }

  private async resolveToken(token: string): Promise<TokenEntry | null> {
    const resolved = await this.tokenResolver?.(token);
    if (resolved === undefined) return null;
    return { ...resolved, limits: await this.store.clientLimits(resolved.clientId) };
  }

  async flushLastUsed(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const batch = new Map(this.lastUsed);
    this.lastUsed.clear();
    await this.store.touchKeys(batch);
  }
}

export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.has(scope)) throw insufficientScope(scope);
}

export function requireBank(principal: Principal, bank: string): void {
  if (principal.banks !== null && !principal.banks.has(bank)) {
    throw problem('forbidden', 'outsideBanks', { bank });
  }
}

export function requireSpace(principal: Principal, space: string): void {
  if (principal.spaces !== null && !principal.spaces.has(space)) {
    throw problem('forbidden', 'outsideSpaces', { space });
  }
}

/** The bank name that grants a bank-limited credential a space's org memory (as the engine names that bank). */
export const orgBank = (space: string): string => `org:${space}`;

/** A bank-limited credential reaches a space's org memory only if "org:<space>" is among its banks. */
export function requireOrg(principal: Principal, space: string): void {
  if (principal.banks !== null && !principal.banks.has(orgBank(space))) {
    throw problem('forbidden', 'orgBankOutsideBanks', { space, orgBank: orgBank(space) });
  }
}
