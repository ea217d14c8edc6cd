// Connect: where a new project lands. The address to use, and snippets for curl, TypeScript, Python and MCP.
import { useState } from 'preact/hooks';
import { CopyBlock } from '../components/CopyButton';
import { ErrorNotice } from '../components/ErrorNotice';
import { Page } from '../components/Page';
import { useGatewayInfo } from '../gateway-info';
import { paths } from '../paths';
import { useProjects } from '../projects';
import { snippets } from '../snippets';

export function Connect({ project }: { project: string }) {
  const info = useGatewayInfo();
  const projects = useProjects();
  const [tab, setTab] = useState('curl');
  const current = projects.data?.find((p) => p.id === project);
  if (info.data === undefined)
    return (
      <Page title="Connect">
        <ErrorNotice error={info.error} />
        <p>Loading…</p>
      </Page>
    );
  const all = snippets(info.data.baseUrl);
  const shown = all.find((s) => s.id === tab) ?? all[0];
  return (
    <Page title="Connect">
      <p>
        Connect an agent or app to {current === undefined ? 'this project' : <strong>{current.name}</strong>} in three
        steps: create an API key, put it in <code>MNEMOS_API_KEY</code>, paste a snippet.
      </p>
      <h2>Base URL</h2>
      <CopyBlock text={info.data.baseUrl} label="base URL" testId="base-url" />
      <p class="hint">
        With a key of this project, <code>{info.data.baseUrl}/v1/me</code> is this project's memory.
        {current === undefined ? null : (
          <>
            {' '}
            Plan <strong>{current.plan}</strong>, engine tenant
            <code> {current.tenant}</code>.
          </>
        )}
      </p>
      <h2>1. An API key</h2>
      <p>
        <a href={paths.project(project, 'keys')}>Create an API key</a> under Connect &gt; API keys. Its secret is shown
        once.
      </p>
      <h2>2. A snippet</h2>
      <div role="tablist" aria-label="Snippet language" class="tabs">
        {all.map((s) => (
          <button
            key={s.id}
            type="button"
            role="tab"
            id={`tab-${s.id}`}
            aria-selected={s.id === tab}
            aria-controls="snippet-panel"
            tabIndex={s.id === tab ? 0 : -1}
            onClick={() => setTab(s.id)}
            onKeyDown={(e) => {
              const i = all.findIndex((x) => x.id === tab);
              const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
              if (step === 0) return;
              const nextTab = all[(i + step + all.length) % all.length];
              if (nextTab === undefined) return;
              setTab(nextTab.id);
              document.getElementById(`tab-${nextTab.id}`)?.focus();
            }}
          >
            {s.label}
          </button>
        ))}
      </div>
      {shown === undefined ? null : (
        <div role="tabpanel" id="snippet-panel" aria-labelledby={`tab-${shown.id}`}>
          <CopyBlock text={shown.text} label={`${shown.label} snippet`} testId={`snippet-${shown.id}`} />
        </div>
      )}
      <h2>3. Watch it work</h2>
      <p>
        See the calls in <a href={paths.project(project, 'usage')}>Usage</a> and the memories in the{' '}
        <a href={paths.project(project, 'memory')}>Memory browser</a>, or try retain, recall and reflect in the{' '}
        <a href={paths.project(project, 'playground')}>Playground</a>.
      </p>
    </Page>
  );
}
