// The signed-in account's projects, shared by the project list, the switcher and the first-project screen.
import { useQuery } from '@tanstack/preact-query';
import { api } from './api';
import type { Project } from './types';

export const PROJECTS_KEY = ['projects'] as const;

export function useProjects() {
  return useQuery({
    queryKey: PROJECTS_KEY,
    queryFn: async () => (await api<{ projects: Project[] }>('GET', '/v1/account/projects')).projects,
  });
}

/** A project name must say something and fit the list. */
export function projectNameError(name: string): string | undefined {
  const trimmed = name.trim();
  if (trimmed === '') return 'Enter a name for the project.';
  if (trimmed.length > 200) return 'Use at most 200 characters.';
  return undefined;
}
