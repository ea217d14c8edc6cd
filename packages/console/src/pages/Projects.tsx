// The account's projects: list with plan and engine tenant, create, rename.
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { Page } from '../components/Page';
import { Table } from '../components/Table';
import { formatDate } from '../format';
import { paths } from '../paths';
import { useProjects } from '../projects';
import type { Project } from '../types';
import { NewProjectForm, ProjectNameForm } from './Welcome';

function RenameForm({ project, onDone }: { project: Project; onDone: () => void }) {
  return (
    <ProjectNameForm
      id={`rename-${project.id}`}
      label="New name"
      initial={project.name}
      submitLabel="Save"
      onCancel={onDone}
      send={async (name) => {
        await api<Project>('PATCH', `/v1/account/projects/${encodeURIComponent(project.id)}`, { body: { name } });
        onDone();
      }}
    />
  );
}

export function Projects() {
  const projects = useProjects();
  const [renaming, setRenaming] = useState<string | null>(null);
  return (
    <Page title="Projects">
      <ErrorNotice error={projects.error} />
      {projects.data === undefined ? (
        <p>Loading…</p>
      ) : (
        <Table caption="Your projects" headers={['Name', 'Plan', 'Engine tenant', 'Created', '']}>
          {projects.data.map((p) => (
            <tr key={p.id}>
              <td>
                {renaming === p.id ? (
                  <RenameForm project={p} onDone={() => setRenaming(null)} />
                ) : (
                  <a href={paths.project(p.id, 'connect')}>{p.name}</a>
                )}
              </td>
              <td>{p.plan}</td>
              <td>
                <code>{p.tenant}</code>
              </td>
              <td>{formatDate(p.created_at)}</td>
              <td>
                {renaming === p.id ? null : (
                  <button type="button" onClick={() => setRenaming(p.id)} aria-label={`Rename ${p.name}`}>
                    Rename
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <h2>New project</h2>
      <NewProjectForm />
    </Page>
  );
}
