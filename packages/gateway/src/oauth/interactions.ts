// The sign-in and consent pages of the authorization-code flow, served by the gateway under /oauth/interaction/{uid}
// (the console may restyle them). Sign-in uses an account's email and password (set through POST /admin/accounts);
// the consent page names the client, lists each requested scope, and lets the account pick which of its projects the
// client may act on.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import { verifyPassword } from '../ids.js';
import { isScope, SCOPE_DESCRIPTIONS } from '../scopes.js';
import type { Store } from '../store.js';
import { clientScopes } from './client-scopes.js';
import { isStorableText } from './storable-text.js';
import type { SignInThrottle } from './signin-throttle.js';
import { signSignIn, subjectOf, verifySignIn } from './provider.js';

const esc = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)} · Mnemos</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}input,select{width:100%;padding:.5rem;box-sizing:border-box}
button{margin-top:1rem;padding:.6rem 1rem}.scopes li{margin:.3rem 0}.error{color:#b00020}code{background:#f3f3f3;padding:0 .2rem}</style>
</head><body>${body}</body></html>`;
}

interface Form {
  [k: string]: string | undefined;
}

function tooManyAttempts(waitMs: number, now: number): { seconds: number; body: string } {
  const seconds = Math.ceil(waitMs / 1000);
  const at = new Date(now + seconds * 1000).toISOString().slice(11, 16);
  const minutes = Math.ceil(seconds / 60);
  return {
    seconds,
    body: page('Sign in', `<h1>Too many failed sign-ins</h1>
<p class="error">Sign-in is paused for this account or network after several wrong passwords. Try again in
${minutes} minute${minutes === 1 ? '' : 's'} (at ${at} UTC).</p>`),
  };
}

export function interactionRoutes(app: FastifyInstance, getProvider: () => Provider, store: Store, formKey: Buffer,
  throttle: SignInThrottle): void {
  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });

    const html = (reply: FastifyReply, status: number, body: string): FastifyReply =>
      reply.code(status).header('cache-control', 'no-store').header('x-frame-options', 'DENY').type('text/html; charset=utf-8').send(body);

    const loginForm = (uid: string, clientName: string, error?: string): string => page('Sign in', `
<h1>Sign in to Mnemos</h1>
<p><strong>${esc(clientName)}</strong> wants to access your Mnemos memory.</p>
${error === undefined ? '' : `<p class="error">${esc(error)}</p>`}
<form method="post" action="/oauth/interaction/${esc(uid)}/login">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>
<form method="post" action="/oauth/interaction/${esc(uid)}/abort"><button type="submit">Cancel</button></form>`);

    const consentForm = async (uid: string, clientName: string, scopes: string[], accountId: string, fixedProject: string | undefined, proof: string): Promise<string> => {
      const projects = (await store.listProjects(accountId)).filter((p) => fixedProject === undefined || p.id === fixedProject);
      const options = projects.map((p) => `<option value="${esc(p.id)}">${esc(p.name)} (${esc(p.id)})</option>`).join('');
      const items = scopes.map((s) => `<li><code>${esc(s)}</code>: ${esc(isScope(s) ? SCOPE_DESCRIPTIONS[s] : s)}</li>`).join('');
      return page('Authorize', `
<h1>Authorize ${esc(clientName)}</h1>
<p><strong>${esc(clientName)}</strong> asks for these permissions:</p>
<ul class="scopes">${items || '<li>No scopes</li>'}</ul>
${projects.length === 0 ? '<p class="error">Your account has no project this client may use.</p>' : `
<form method="post" action="/oauth/interaction/${esc(uid)}/confirm">
<input type="hidden" name="proof" value="${esc(proof)}">
<label for="project">Project</label><select id="project" name="project">${options}</select>
<button type="submit">Allow</button></form>`}
<form method="post" action="/oauth/interaction/${esc(uid)}/abort"><button type="submit">Deny</button></form>`);
    };

    const details = async (request: FastifyRequest, reply: FastifyReply) => {
      const provider = getProvider();
      const interaction = await provider.interactionDetails(request.raw, reply.raw);
      const clientId = String(interaction.params['client_id'] ?? '');
      const client = await provider.Client.find(clientId);
      const meta: Record<string, unknown> = client?.metadata() ?? {};
      const clientName = typeof meta['client_name'] === 'string' ? meta['client_name'] : clientId;
      const fixedProject = typeof meta['project_id'] === 'string' ? meta['project_id'] : undefined;
      const requested = String(interaction.params['scope'] ?? '').split(' ').filter((s) => s.length > 0);
      const allowed = new Set<string>(clientScopes(meta));
      const scopes = requested.filter((s) => isScope(s) && allowed.has(s));
      return { provider, interaction, clientId, clientName, fixedProject, requested, scopes };
    };

    const fail = (reply: FastifyReply, err: unknown): FastifyReply =>
      html(reply, 400, page('Authorization', `<h1>This sign-in link is no longer valid</h1><p>${esc(err instanceof Error ? err.message : 'Start again from the application.')}</p>`));

    scope.get('/oauth/interaction/:uid', async (request, reply) => {
      try {
        const d = await details(request, reply);
        const accountSub = d.interaction.session?.accountId;
        if (d.interaction.prompt.name === 'consent' && accountSub !== undefined) {
          const accountId = accountSub.split(':')[0] ?? '';
          return html(reply, 200, await consentForm(d.interaction.uid, d.clientName, d.scopes, accountId, d.fixedProject,
            signSignIn(formKey, d.interaction.uid, accountId)));
        }
        return html(reply, 200, loginForm(d.interaction.uid, d.clientName));
      } catch (err) {
        return fail(reply, err);
      }
    });

    scope.post('/oauth/interaction/:uid/login', async (request, reply) => {
      try {
        const d = await details(request, reply);
        const form = (request.body ?? {}) as Form;
        const email = form['email'] ?? '';
        const waitMs = throttle.waitMs(email, request.ip);
        if (waitMs > 0) {
          const paused = tooManyAttempts(waitMs, Date.now());
          return html(reply.header('retry-after', String(paused.seconds)), 429, paused.body);
        }
        // An email the database cannot hold names no account; it counts as a wrong guess rather than a server error.
        const creds = isStorableText(email) ? await store.accountCredentials(email) : undefined;
        const ok = await verifyPassword(form['password'] ?? '', creds?.password_hash ?? null);
        if (creds === undefined || !ok) {
          throttle.recordFailure(email, request.ip);
          return html(reply, 401, loginForm(d.interaction.uid, d.clientName, 'Wrong email or password.'));
        }
        throttle.recordSuccess(email);
        return html(reply, 200, await consentForm(d.interaction.uid, d.clientName, d.scopes, creds.id, d.fixedProject,
          signSignIn(formKey, d.interaction.uid, creds.id)));
      } catch (err) {
        return fail(reply, err);
      }
    });

    scope.post('/oauth/interaction/:uid/confirm', async (request, reply) => {
      try {
        const d = await details(request, reply);
        const form = (request.body ?? {}) as Form;
        const accountId = verifySignIn(formKey, d.interaction.uid, form['proof'] ?? '');
        const projectId = form['project'] ?? '';
        const project = accountId === undefined ? undefined : await store.getProject(projectId);
        if (accountId === undefined || project === undefined || project.account_id !== accountId
          || (d.fixedProject !== undefined && d.fixedProject !== projectId)) {
          return html(reply, 403, page('Authorize', '<h1>Not allowed</h1><p>Sign in again and choose one of your projects.</p>'));
        }
        const accountSub = subjectOf(accountId, projectId);
        const grant = new d.provider.Grant({ accountId: accountSub, clientId: d.clientId });
        const resource = String(d.interaction.params['resource'] ?? d.provider.issuer);
        grant.addResourceScope(resource, d.scopes.join(' '));
        // The seven scopes are also provider-level scopes (so registration accepts them); recording them on the grant
        // answers the consent prompt, while tokens carry only the resource scopes added above.
        const granted = d.requested.filter((s) => s === 'openid' || s === 'offline_access' || d.scopes.includes(s));
        const refused = d.requested.filter((s) => !granted.includes(s));
        if (granted.length > 0) grant.addOIDCScope(granted.join(' '));
        if (refused.length > 0) grant.rejectOIDCScope(refused.join(' '));
        const grantId = await grant.save();
        await d.provider.interactionFinished(request.raw, reply.raw, {
          login: { accountId: accountSub },
          consent: { grantId },
        }, { mergeWithLastSubmission: false });
        reply.hijack();
        return reply;
      } catch (err) {
        return fail(reply, err);
      }
    });

    scope.post('/oauth/interaction/:uid/abort', async (request, reply) => {
      try {
        await getProvider().interactionFinished(request.raw, reply.raw, {
          error: 'access_denied', error_description: 'The user denied the request.',
        }, { mergeWithLastSubmission: false });
        reply.hijack();
        return reply;
      } catch (err) {
        return fail(reply, err);
      }
    });
  });
}
