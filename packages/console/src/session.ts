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
  // Answers cached for an earlier session must not show; the pages on screen (which stay subscribed) fetch theirs
  // again, so a page that signs in in place, like OAuth consent, moves on by itself.
  client.removeQueries({ predicate: (query) => query.getObserversCount() === 0 });
  client.setQueryData(SESSION_KEY, answer.account);
  void client.invalidateQueries({ predicate: (query) => query.queryKey[0] !== SESSION_KEY[0] });
}

export async function signOut(client: QueryClient): Promise<void> {
  await api('DELETE', '/v1/account/session');
  setCsrfToken(null);
  client.clear();
  client.setQueryData(SESSION_KEY, null);
}
