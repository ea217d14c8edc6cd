// Sign-in and consent of the authorization-code flow, as JSON for the console: the authorization endpoint sends the
// browser to the console page /console/oauth/{uid}, which reads the interaction here, signs the person in through the
// session endpoints, and posts their answer (a project of theirs and allow, or deny). The answer names where the
// browser goes next: the authorization endpoint, which the browser that started the flow alone can resume.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type Provider from 'oidc-provider';
import type { Interaction, InteractionResults } from 'oidc-provider';
import type { GatewayContext } from '../context.js';
import { clientScopes } from '../oauth/client-scopes.js';
import { subjectOf } from '../oauth/provider.js';
import { problem } from '@mnemos/problems';
import { answers, SESSION_ROUTE } from '../route-problems.js';
import { guarded } from '../proxy.js';
import { isScope, SCOPE_DESCRIPTIONS, type Scope } from '../scopes.js';
import { ACCOUNT_SECURITY } from './routes.js';
import { sessionGate } from './session-gate.js';

const UidParam = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) });
const InteractionAnswer = Type.Object({
  client: Type.Object({ id: Type.String(), name: Type.String() }),
  scopes: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
  prompt: Type.Union([Type.Literal('login'), Type.Literal('consent')], {
    description: '"login" until the browser is signed in to the console, then "consent"',
  }),
  project_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The one project this client may be authorized for (a project OAuth client); null: any of yours',
  }),
});
const DecisionBody = Type.Object(
  {
    allow: Type.Boolean(),
    project_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);

interface Details {
  interaction: Interaction;
  clientId: string;
  clientName: string;
  /** The project a project client belongs to; undefined for dynamically registered clients. */
  fixedProject: string | undefined;
  requested: string[];
  /** The requested scopes this client may obtain. */
  scopes: Scope[];
}

async function details(provider: Provider, uid: string): Promise<Details> {
  const interaction = await provider.Interaction.find(uid);
  if (interaction === undefined) {
    throw problem('interaction_not_found', 'ended');
  }
  const clientId = textParam(interaction.params['client_id']) ?? '';
  const client = await provider.Client.find(clientId);
  const meta: Record<string, unknown> = client?.metadata() ?? {};
  const allowed = new Set<string>(clientScopes(meta));
  const requested = (textParam(interaction.params['scope']) ?? '').split(' ').filter((s) => s.length > 0);
  return {
    interaction,
    clientId,
    clientName: typeof meta['client_name'] === 'string' ? meta['client_name'] : clientId,
    fixedProject: typeof meta['project_id'] === 'string' ? meta['project_id'] : undefined,
    requested,
    scopes: requested.filter((s): s is Scope => isScope(s) && allowed.has(s)),
  };
}

/** Records the grant of the chosen project and scopes; returns the interaction's result. */
async function allow(
  provider: Provider,
  d: Details,
  accountId: string,
  projectId: string,
): Promise<InteractionResults> {
  const accountSub = subjectOf(accountId, projectId);
  const grant = new provider.Grant({ accountId: accountSub, clientId: d.clientId });
  const resource = textParam(d.interaction.params['resource']) ?? provider.issuer;
  grant.addResourceScope(resource, d.scopes.join(' '));
  // The seven scopes are also provider-level scopes (so registration accepts them); recording them on the grant
  // answers the consent prompt, while tokens carry only the resource scopes added above.
  const allowed: readonly string[] = d.scopes;
  const granted = d.requested.filter((s) => s === 'openid' || s === 'offline_access' || allowed.includes(s));
  const refused = d.requested.filter((s) => !granted.includes(s));
  if (granted.length > 0) grant.addOIDCScope(granted.join(' '));
  if (refused.length > 0) grant.rejectOIDCScope(refused.join(' '));
  const grantId = await grant.save();
  return { login: { accountId: accountSub }, consent: { grantId } };
}

/** An authorization request parameter, which the provider has already checked is a string when present. */
const textParam = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export function consentRoutes(app: FastifyInstance, ctx: GatewayContext, getProvider: () => Provider): void {
  const tags = ['account'];
  const { onRequest: requireSession, sessionOf } = sessionGate(ctx.console);
  const uidOf = (request: FastifyRequest): string => (request.params as { uid: string }).uid;

  app.get(
    '/v1/account/oauth/interactions/:uid',
    {
      schema: {
        operationId: 'getOAuthInteraction',
        summary: 'The client, scopes and next step of an authorization request',
        tags,
        security: [],
        params: UidParam,
        ...answers({ 200: InteractionAnswer }, ['interaction_not_found']),
      },
    },
    guarded(async (request: FastifyRequest, reply: FastifyReply) => {
      const d = await details(getProvider(), uidOf(request));
      const signedIn = await ctx.console.current(request);
      return reply.header('cache-control', 'no-store').send({
        client: { id: d.clientId, name: d.clientName },
        scopes: d.scopes.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] })),
        prompt: signedIn === undefined ? 'login' : 'consent',
        project_id: d.fixedProject ?? null,
      });
    }),
  );

  app.post(
    '/v1/account/oauth/interactions/:uid',
    {
      schema: {
        operationId: 'decideOAuthInteraction',
        tags,
        summary: 'Allow (for one of your projects) or deny an authorization request',
        security: ACCOUNT_SECURITY,
        params: UidParam,
        body: DecisionBody,
        ...answers({ 200: Type.Object({ redirect_to: Type.String({ description: 'Send the browser here' }) }) }, [
          ...SESSION_ROUTE,
          'interaction_not_found',
          'forbidden',
          'not_found',
        ]),
      },
      onRequest: requireSession,
    },
    guarded(async (request: FastifyRequest, reply: FastifyReply) => {
      const { session } = sessionOf(request);
      const provider = getProvider();
      const d = await details(provider, uidOf(request));
      const body = request.body as { allow: boolean; project_id?: string };
      let result: InteractionResults;
      if (!body.allow) {
        result = { error: 'access_denied', error_description: 'The user denied the request.' };
      } else {
        if (body.project_id === undefined) {
          throw problem('validation_failed', 'consentWithoutProject', {
            errors: [{ pointer: '/project_id', detail: 'is required when allow is true' }],
          });
        }
        const project = await ctx.console.ownProject(session, body.project_id);
        if (d.fixedProject !== undefined && d.fixedProject !== project.id) {
          throw problem('forbidden', 'clientOfOtherProject', { project: d.fixedProject });
        }
        result = await allow(provider, d, session.accountId, project.id);
      }
      d.interaction.result = result;
      await d.interaction.save(d.interaction.exp - Math.floor(Date.now() / 1000));
      return reply.header('cache-control', 'no-store').send({ redirect_to: d.interaction.returnTo });
    }),
  );
}
