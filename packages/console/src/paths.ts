// Console URLs in one place: the app lives under /console/ (Vite's base), and bank ids are URL-encoded.
export const BASE = '/console';

export const paths = {
  home: `${BASE}/`,
  signIn: `${BASE}/signin`,
  signUp: `${BASE}/signup`,
  welcome: `${BASE}/welcome`,
  projects: `${BASE}/projects`,
  project: (project: string, page: string): string => `${BASE}/p/${encodeURIComponent(project)}/${page}`,
  bank: (project: string, bank: string): string =>
    `${BASE}/p/${encodeURIComponent(project)}/memory/${encodeURIComponent(bank)}`,
  memory: (project: string, bank: string, memory: string): string =>
    `${BASE}/p/${encodeURIComponent(project)}/memory/${encodeURIComponent(bank)}/${encodeURIComponent(memory)}`,
  oauth: (uid: string): string => `${BASE}/oauth/${encodeURIComponent(uid)}`,
};

/** A route parameter as the user wrote it (the router hands them over still encoded). */
export function param(value: string | undefined): string {
  if (value === undefined) return '';
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Where to go after signing in: only a path inside the console, never another site. */
export function safeNext(next: string | undefined): string {
  return next !== undefined && next.startsWith(`${BASE}/`) && !next.startsWith('//') ? next : paths.home;
}
