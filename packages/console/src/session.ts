// The signed-in account: read once from GET /v1/account/session and kept in the query cache; sign-in, sign-up and
// sign-out replace it there so every page sees the change at once.
import { useQuery, type QueryClient } from '@tanstack/preact-query';
import { api, ApiError, setCsrfToken } from './api';
import type { Account, SessionAnswer } from './types';

export const SESSION_KEY = ['session'] as const;

async function loadSession(): Promise<Account | null> {
  try {
    const answer = await api<SessionAnswer>('GET', '/v1/account/session');
    setCsrfToken(answer.csrf_token);
    return answer.account;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      setCsrfToken(null);
      return null;
    }
    throw error;
  }
}

export function useSession(): { account: Account | null | undefined; error: unknown } {
  const query = useQuery({ queryKey: SESSION_KEY, queryFn: loadSession, staleTime: Infinity, retry: false });
  return { account: query.data, error: query.error };
}

/** Records a session the gateway just opened (sign-in or sign-up). */
export function sessionOpened(client: QueryClient, answer: SessionAnswer): void {
  setCsrfToken(answer.csrf_token);
  client.clear();
  client.setQueryData(SESSION_KEY, answer.account);
}

export async function signOut(client: QueryClient): Promise<void> {
  await api('DELETE', '/v1/account/session');
  setCsrfToken(null);
  client.clear();
  client.setQueryData(SESSION_KEY, null);
}
