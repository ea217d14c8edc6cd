// OAuth clients: create (name, redirect URIs, scopes; the secret once), list, delete with confirmation.
import { useState } from 'preact/hooks';
import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useAction } from '../action';
import { api } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { Field, hasErrors, type FieldErrors } from '../components/Field';
import { Page } from '../components/Page';
import { Table } from '../components/Table';
import { ScopePicker } from '../components/ScopePicker';
import { SecretOnce } from '../components/SecretOnce';
import { formatDate } from '../format';
import { useGatewayInfo } from '../gateway-info';
import type { CreatedClient, OAuthClient } from '../types';

const lines = (text: string): string[] =>
  text
    .split(/\s+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');

function redirectError(text: string): string | undefined {
  for (const uri of lines(text)) {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return `"${uri}" is not an absolute URL; write it as https://app.example.com/callback.`;
    }
    if (url.hash !== '') return `"${uri}" has a #fragment, which redirect URIs may not have.`;
  }
  return lines(text).length > 20 ? 'Use at most 20 redirect URIs.' : undefined;
}

function ClientForm({ project, onCreated }: { project: string; onCreated: (c: CreatedClient) => void }) {
  const info = useGatewayInfo();
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [redirects, setRedirects] = useState('');
  const [scopes, setScopes] = useState<string[]>(['mcp', 'memory:recall']);
  const [errors, setErrors] = useState<FieldErrors>({});
  const { busy, error, run } = useAction();
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const found: FieldErrors = {
      'client-name':
        name.trim() === ''
          ? 'Enter a name people will see on the consent page.'
          : name.length > 200
            ? 'Use at most 200 characters.'
            : undefined,
      'client-redirects': redirectError(redirects),
      scopes: scopes.length === 0 ? 'Choose at least one scope.' : undefined,
    };
    setErrors(found);
    if (hasErrors(found)) return;
    await run(async () => {
      const body = {
        name: name.trim(),
        scopes,
        ...(lines(redirects).length > 0 ? { redirect_uris: lines(redirects) } : {}),
      };
      const created = await api<CreatedClient>('POST', '/v1/me/oauth/clients', { project, body });
      await client.invalidateQueries({ queryKey: ['oauth-clients', project] });
      setName('');
      setRedirects('');
      onCreated(created);
    });
  };
  return (
    <form onSubmit={(e) => void submit(e)} noValidate>
      <ErrorNotice error={error ?? info.error} />
      <Field id="client-name" label="Name" required value={name} onInput={setName} error={errors['client-name']} />
      <Field
        id="client-redirects"
        label="Redirect URIs"
        multiline
        value={redirects}
        onInput={setRedirects}
        error={errors['client-redirects']}
        hint="One per line, for the authorization-code flow. Leave empty for a client-credentials client."
      />
      <ScopePicker
        idPrefix="client"
        scopes={info.data?.scopes ?? []}
        chosen={scopes}
        onChange={setScopes}
        error={errors['scopes']}
      />
      <button type="submit" class="primary" disabled={busy}>
        Create client
      </button>
    </form>
  );
}

export function OAuthClients({ project }: { project: string }) {
  const client = useQueryClient();
  const list = useQuery({
    queryKey: ['oauth-clients', project],
    queryFn: async () => (await api<{ items: OAuthClient[] }>('GET', '/v1/me/oauth/clients', { project })).items,
  });
  const [created, setCreated] = useState<CreatedClient | null>(null);
  const [deleting, setDeleting] = useState<OAuthClient | null>(null);
  const removal = useAction();
  const remove = async (): Promise<void> => {
    if (deleting === null) return;
    const target = deleting;
    await removal.run(() => api('DELETE', `/v1/me/oauth/clients/${encodeURIComponent(target.client_id)}`, { project }));
    setDeleting(null);
    await client.invalidateQueries({ queryKey: ['oauth-clients', project] });
  };
  return (
    <Page title="OAuth clients">
      <p>
        An OAuth client lets an application (an MCP client, for example) ask a person for access to this project instead
        of holding an API key.
      </p>
      {created === null || created.client_secret === undefined ? null : (
        <SecretOnce
          title={`Client secret of ${created.client_id}`}
          secret={created.client_secret}
          onDone={() => setCreated(null)}
        />
      )}
      <h2>Create a client</h2>
      <ClientForm project={project} onCreated={setCreated} />
      <h2>Clients</h2>
      <ErrorNotice error={removal.error ?? list.error} />
      {list.data === undefined ? (
        <p>Loading…</p>
      ) : list.data.length === 0 ? (
        <p>No OAuth clients yet.</p>
      ) : (
        <Table
          caption="OAuth clients of this project"
          headers={['Name', 'Client id', 'Scopes', 'Redirect URIs', 'Created', '']}
        >
          {list.data.map((c) => (
            <tr key={c.client_id}>
              <td>{c.name ?? '—'}</td>
              <td>
                <code>{c.client_id}</code>
              </td>
              <td>{c.scopes.join(', ')}</td>
              <td>{c.redirect_uris.length === 0 ? '—' : c.redirect_uris.map((u) => <div key={u}>{u}</div>)}</td>
              <td>{formatDate(c.created_at)}</td>
              <td>
                <button
                  type="button"
                  class="danger"
                  onClick={() => setDeleting(c)}
                  aria-label={`Delete client ${c.name ?? c.client_id}`}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <ConfirmDialog
        open={deleting !== null}
        title="Delete this client?"
        confirmLabel="Delete client"
        busy={removal.busy}
        onConfirm={() => void remove()}
        onCancel={() => setDeleting(null)}
      >
        <p>
          Client <code>{deleting?.client_id}</code> and every token it holds stop working at once.
        </p>
      </ConfirmDialog>
    </Page>
  );
}
