/** The signed-in seller: `auth.session` once per load (it also gives the CSRF token), then cached. */
import { redirect } from '@tanstack/react-router';
import { isSignedOut, queryClient, setCsrfToken, trpc } from './api';

export const sessionQuery = trpc.auth.session.queryOptions(undefined, { staleTime: Infinity, retry: false });

/** For a route's beforeLoad: the session, or a redirect to sign-in that comes back to `href`. */
export async function requireSession(href: string) {
  try {
    const session = await queryClient.ensureQueryData(sessionQuery);
    setCsrfToken(session.csrfToken);
    return session;
  } catch (error) {
    if (isSignedOut(error)) throw redirect({ to: '/sign-in', search: { redirect: href } });
    throw error;
  }
}

/** After sign-in or registration: the session as the API answered it. */
export function signedIn(result: { user: unknown; csrfToken: string }): void {
  setCsrfToken(result.csrfToken);
  queryClient.setQueryData(sessionQuery.queryKey, result as never);
}

/** After sign-out or a 401: nothing of the old session stays in memory. */
export function signedOut(): void {
  setCsrfToken(undefined);
  queryClient.clear();
}

/** Only paths of this app are followed after sign-in (never another site): router-relative, one leading slash. */
export function safeRedirect(target: string | undefined): string {
  return target && /^\/(?![/\\])/.test(target) ? target : '/';
}
