// OAuth sign-in and consent: who is asking (the client's name), for what (each scope and its description), on which
// project; allow or deny, then back to the client.
import { useState } from 'preact/hooks';
import { useQuery } from '@tanstack/preact-query';
import { api } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { Page } from '../components/Page';
import { paths } from '../paths';
import { useProjects } from '../projects';
import { useSession } from '../session';
import type { Interaction } from '../types';
import { AuthForm } from './AuthForm';

function Consent({ uid, interaction }: { uid: string; interaction: Interaction }) {
  const projects = useProjects();
  const [project, setProject] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const fixed = interaction.project_id ?? null;
  const offered = (projects.data ?? []).filter((p) => fixed === null || p.id === fixed);
  const chosen = project !== '' ? project : (offered[0]?.id ?? '');
  const decide = async (allow: boolean): Promise<void> => {
    if (allow && chosen === '') {
      setError(new Error('Choose the project this application may use.'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const answer = await api<{ redirect_to: string }>(
        'POST',
        `/v1/account/oauth/interactions/${encodeURIComponent(uid)}`,
        // A denial names no project: the visitor may deny before their projects have loaded.
        { body: allow ? { project_id: chosen, allow } : { allow } },
      );
      window.location.assign(answer.redirect_to);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <Page title={`Allow ${interaction.client.name}?`}>
      <p>
        <strong>{interaction.client.name}</strong> asks to use your Mnemos memory with these permissions:
      </p>
      <ul class="scope-list">
        {interaction.scopes.map((s) => (
          <li key={s.name}>
            <code>{s.name}</code>: {s.description}
          </li>
        ))}
      </ul>
      <ErrorNotice error={error ?? projects.error} />
      {projects.data === undefined ? (
        <p>Loading your projects…</p>
      ) : offered.length === 0 ? (
        fixed === null ? (
          <p>
            You have no project yet: <a href={paths.welcome}>create one</a>, then come back to this page.
          </p>
        ) : (
          <p>This application belongs to a project of another account: sign out and sign in with that account.</p>
        )
      ) : (
        <div class="field">
          <label for="consent-project">Project</label>
          <select id="consent-project" value={chosen} onChange={(e) => setProject(e.currentTarget.value)}>
            {offered.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
      )}
      <div class="actions">
        <button type="button" class="primary" disabled={busy} onClick={() => void decide(true)}>
          Allow
        </button>
        <button type="button" disabled={busy} onClick={() => void decide(false)}>
          Deny
        </button>
      </div>
    </Page>
  );
}

export function OAuthConsent({ uid }: { uid: string }) {
  const { account } = useSession();
  const interaction = useQuery({
    queryKey: ['interaction', uid],
    queryFn: () => api<Interaction>('GET', `/v1/account/oauth/interactions/${encodeURIComponent(uid)}`),
    retry: false,
  });
  if (interaction.error !== null) {
    return (
      <Page title="Authorization request">
        <ErrorNotice error={interaction.error} />
      </Page>
    );
  }
  if (interaction.data === undefined || account === undefined) return <p>Loading…</p>;
  if (account === null) {
    return (
      <div>
        <p class="notice">
          Sign in to let <strong>{interaction.data.client.name}</strong> use your memory.
        </p>
        <AuthForm mode="signin" next={paths.oauth(uid)} />
      </div>
    );
  }
  return <Consent uid={uid} interaction={interaction.data} />;
}
