// The frame around signed-in pages: who is signed in, the project switcher, the project's sections.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useQueryClient } from '@tanstack/preact-query';
import { paths } from '../paths';
import { useProjects } from '../projects';
import { signOut, useSession } from '../session';
import { ErrorNotice } from './ErrorNotice';

const SECTIONS: Array<{ page: string; label: string }> = [
  { page: 'connect', label: 'Connect' },
  { page: 'keys', label: 'API keys' },
  { page: 'oauth-clients', label: 'OAuth clients' },
  { page: 'usage', label: 'Usage' },
  { page: 'memory', label: 'Memory' },
  { page: 'playground', label: 'Playground' },
];

export function Layout({ project, children }: { project?: string; children: ComponentChildren }) {
  const { account } = useSession();
  const projects = useProjects();
  const client = useQueryClient();
  const location = useLocation();
  const [error, setError] = useState<unknown>(null);
  const onSignOut = async (): Promise<void> => {
    try {
      await signOut(client);
      location.route(paths.signIn);
    } catch (e) {
      setError(e);
    }
  };
  const current = projects.data?.find((p) => p.id === project);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={paths.home}>
          Mnemos
        </a>
        {projects.data !== undefined && projects.data.length > 0 ? (
          <label class="switcher">
            <span class="visually-hidden">Project</span>
            <select
              value={project ?? ''}
              onChange={(e) => {
                const id = e.currentTarget.value;
                location.route(id === '' ? paths.projects : paths.project(id, 'connect'));
              }}
            >
              {project === undefined ? <option value="">Choose a project</option> : null}
              {projects.data.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <a href={paths.projects}>Projects</a>
        <span class="who">{account?.email}</span>
        <button type="button" onClick={() => void onSignOut()}>
          Sign out
        </button>
      </header>
      {project !== undefined ? (
        <nav class="sections" aria-label={`Project ${current?.name ?? ''}`}>
          <ul>
            {SECTIONS.map((s) => {
              const href = paths.project(project, s.page);
              const active = location.path === href || location.path.startsWith(`${href}/`);
              return (
                <li key={s.page}>
                  <a href={href} aria-current={active ? 'page' : undefined}>
                    {s.label}
                  </a>
                </li>
              );
            })}
          </ul>
        </nav>
      ) : null}
      <main id="main">
        <ErrorNotice error={error} />
        {children}
      </main>
    </div>
  );
}
