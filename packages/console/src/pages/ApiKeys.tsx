// Connect > API keys: create (scopes, optional banks, spaces and expiry), the secret once, list, revoke.
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
import { expiryError, idsError, limitsBody } from '../limits';
import type { ApiKey, CreatedKey } from '../types';

function KeyForm({ project, onCreated }: { project: string; onCreated: (key: CreatedKey) => void }) {
  const info = useGatewayInfo();
  const client = useQueryClient();
  const [name, setName] = useState('');
  // Until the person picks scopes, the form shows the ones the API gives a key by default.
  const [pickedScopes, setScopes] = useState<string[] | null>(null);
  const scopes = pickedScopes ?? info.data?.defaultKeyScopes ?? [];
  const [banks, setBanks] = useState('');
  const [spaces, setSpaces] = useState('');
  const [expiry, setExpiry] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const { busy, error, run } = useAction();
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const found: FieldErrors = {
      'key-name': name.length > 200 ? 'Use at most 200 characters.' : undefined,
      scopes: scopes.length === 0 ? 'Choose at least one scope.' : undefined,
      'key-banks': idsError(banks, 'bank'),
      'key-spaces': idsError(spaces, 'space'),
      'key-expiry': expiryError(expiry, new Date()),
    };
    setErrors(found);
    if (hasErrors(found)) return;
    await run(async () => {
      const body = {
        ...(name.trim() === '' ? {} : { name: name.trim() }),
        scopes,
        ...limitsBody(banks, spaces, expiry),
      };
      const created = await api<CreatedKey>('POST', '/v1/me/keys', { project, body });
      await client.invalidateQueries({ queryKey: ['keys', project] });
      // The creation answer does not repeat the name; the secret's box names the key it belongs to.
      const named = { ...created, name: name.trim() === '' ? null : name.trim() };
      setName('');
      setScopes(null);
      setBanks('');
      setSpaces('');
      setExpiry('');
      onCreated(named);
    });
  };
  return (
    <form onSubmit={(e) => void submit(e)} noValidate>
      <ErrorNotice error={error ?? info.error} />
      <Field
        id="key-name"
        label="Name"
        value={name}
        onInput={setName}
        error={errors['key-name']}
        hint="Where the key is used, for example “support bot (production)”."
      />
      <ScopePicker
        idPrefix="key"
        scopes={info.data?.scopes ?? []}
        chosen={scopes}
        onChange={setScopes}
        error={errors['scopes']}
      />
      <Field
        id="key-banks"
        label="Only these banks (optional)"
        value={banks}
        onInput={setBanks}
        error={errors['key-banks']}
        hint="Bank ids separated by commas or new lines; empty means every bank."
      />
      <Field
        id="key-spaces"
        label="Only these spaces (optional)"
        value={spaces}
        onInput={setSpaces}
        error={errors['key-spaces']}
        hint="Space names separated by commas; empty means every space."
      />
      <Field
        id="key-expiry"
        label="Expires on (optional)"
        type="date"
        value={expiry}
        onInput={setExpiry}
        error={errors['key-expiry']}
        hint="The key stops working at the end of this day (UTC)."
      />
      <button type="submit" class="primary" disabled={busy}>
        Create key
      </button>
    </form>
  );
}

function status(key: ApiKey): string {
  if (key.revoked_at !== null && key.revoked_at !== undefined) return 'revoked';
  if (key.expires_at !== null && new Date(key.expires_at).getTime() <= Date.now()) return 'expired';
  return 'active';
}

export function ApiKeys({ project }: { project: string }) {
  const client = useQueryClient();
  const keys = useQuery({
    queryKey: ['keys', project],
    queryFn: async () => (await api<{ items: ApiKey[] }>('GET', '/v1/me/keys', { project })).items,
  });
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const revocation = useAction();
  const revoke = async (): Promise<void> => {
    if (revoking === null) return;
    const target = revoking;
    await revocation.run(() => api('DELETE', `/v1/me/keys/${encodeURIComponent(target.id)}`, { project }));
    setRevoking(null);
    await client.invalidateQueries({ queryKey: ['keys', project] });
  };
  return (
    <Page title="API keys">
      <p>
        A key lets a program use this project's memory with the scopes you give it. Send it as
        <code> Authorization: Bearer mnm_live_…</code>.
      </p>
      {created === null ? null : (
        <SecretOnce
          title={`Your new key${created.name === null ? '' : ` “${created.name}”`}`}
          secret={created.key}
          onDone={() => setCreated(null)}
        />
      )}
      <h2>Create a key</h2>
      <KeyForm project={project} onCreated={setCreated} />
      <h2>Keys</h2>
      <ErrorNotice error={revocation.error ?? keys.error} />
      {keys.data === undefined ? (
        <p>Loading…</p>
      ) : keys.data.length === 0 ? (
        <p>No keys yet.</p>
      ) : (
        <Table
          caption="API keys of this project"
          headers={['Name', 'Prefix', 'Scopes', 'Created', 'Last used', 'Expires', 'Status', '']}
        >
          {keys.data.map((k) => (
            <tr key={k.id} data-key-prefix={k.prefix}>
              <td>{k.name ?? '—'}</td>
              <td>
                <code>{k.prefix}</code>
              </td>
              <td>
                {k.scopes.join(', ')}
                {k.banks === null ? null : <div class="hint">banks: {k.banks.join(', ')}</div>}
                {k.spaces === null ? null : <div class="hint">spaces: {k.spaces.join(', ')}</div>}
              </td>
              <td>{formatDate(k.created_at)}</td>
              <td>{formatDate(k.last_used_at)}</td>
              <td>{formatDate(k.expires_at)}</td>
              <td>{status(k)}</td>
              <td>
                {status(k) === 'revoked' ? null : (
                  <button
                    type="button"
                    class="danger"
                    onClick={() => setRevoking(k)}
                    aria-label={`Revoke key ${k.name ?? k.prefix}`}
                  >
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this key?"
        confirmLabel="Revoke key"
        busy={revocation.busy}
        onConfirm={() => void revoke()}
        onCancel={() => setRevoking(null)}
      >
        <p>
          Key <code>{revoking?.prefix}</code> stops working at once; programs using it get 401. This cannot be undone.
        </p>
      </ConfirmDialog>
    </Page>
  );
}
