// The first screen after sign-up: name the first project, then go to its Connect page.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useQueryClient } from '@tanstack/preact-query';
import { useAction } from '../action';
import { api } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { Field } from '../components/Field';
import { Page } from '../components/Page';
import { paths } from '../paths';
import { PROJECTS_KEY, projectNameError } from '../projects';
import type { Project } from '../types';

interface ProjectNameFormProps {
  id: string;
  label: string;
  initial?: string;
  submitLabel: string;
  /** Sends the checked, trimmed name. */
  send: (name: string) => Promise<void>;
  onCancel?: () => void;
}

/** A project's name, checked before sending: used to create a project and to rename one. */
export function ProjectNameForm(props: ProjectNameFormProps) {
  const [name, setName] = useState(props.initial ?? '');
  const [nameError, setNameError] = useState<string | undefined>(undefined);
  const { busy, error, run } = useAction();
  const client = useQueryClient();
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const problem = projectNameError(name);
    setNameError(problem);
    if (problem !== undefined) return;
    await run(async () => {
      await props.send(name.trim());
      await client.invalidateQueries({ queryKey: PROJECTS_KEY });
    });
  };
  return (
    <form class={props.onCancel === undefined ? undefined : 'inline'} onSubmit={(e) => void submit(e)} noValidate>
      <ErrorNotice error={error} />
      <Field
        id={props.id}
        label={props.label}
        required
        value={name}
        onInput={setName}
        error={nameError}
        hint={props.onCancel === undefined ? 'For example the agent or app that will use this memory.' : undefined}
      />
      <button type="submit" class="primary" disabled={busy}>
        {props.submitLabel}
      </button>
      {props.onCancel === undefined ? null : (
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      )}
    </form>
  );
}

/** Creates a project and opens its Connect page. */
export function NewProjectForm() {
  const location = useLocation();
  return (
    <ProjectNameForm
      id="project-name"
      label="Project name"
      submitLabel="Create project"
      send={async (name) => {
        const project = await api<Project>('POST', '/v1/account/projects', { body: { name } });
        location.route(paths.project(project.id, 'connect'));
      }}
    />
  );
}

export function Welcome() {
  return (
    <Page title="Create your first project">
      <p>A project holds your API keys, your usage and your agents' memory.</p>
      <NewProjectForm />
    </Page>
  );
}
