/**
 * The dashboard's one way to the API: tRPC over /trpc (batched), typed from the server's router.
 * The session is the svc_session cookie (HttpOnly, same origin); the CSRF token every unsafe call
 * needs is held here in memory only, from sign-in or from `auth.session` on load, never in storage.
 */
import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { createTRPCOptionsProxy } from '@trpc/tanstack-react-query';
import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '@svc/server/dist/api/app-router.js';
import { currentMode, onModeSwitch } from './mode';

/** What each procedure answers, as the screens name it: `RouterOutputs['orders']['dashboardList']`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;

let csrfToken: string | undefined;

/** Kept from sign-in, registration or the session query; cleared on sign-out. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** The error the API answered with: our code (docs/architecture.md, Errors), its message, and field issues. */
export interface ApiFailure {
  code: string;
  message: string;
  status: number;
  issues: Array<{ path: string; message: string }>;
  /** No answer at all: the connection is lost. A retry may help. */
  offline: boolean;
}

/** The headers a call outside tRPC (an upload, a download) sends with the session cookie: the mode and CSRF. */
export function plainHeaders(): Record<string, string> {
  return { 'X-Svc-Mode': currentMode(), ...(csrfToken ? { 'X-CSRF-Token': csrfToken } : {}) };
}

/** Our error body ({ error, code, issues }) from a plain route, or a lost connection (status 0). */
export class HttpFailure extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
    readonly issues: Array<{ path: string; message: string }> = [],
  ) {
    super(message);
  }
}

/**
 * POSTs one file as multipart/form-data (field `file`) to a plain route, with the session cookie
 * and the CSRF header; XMLHttpRequest because fetch reports no upload progress. Resolves with the
 * JSON answer; rejects with an HttpFailure carrying our error body.
 */
export function uploadFile(
  url: string,
  file: File,
  onProgress: (loaded: number, total: number) => void,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    xhr.withCredentials = true;
    for (const [name, value] of Object.entries(plainHeaders())) xhr.setRequestHeader(name, value);
    xhr.responseType = 'json';
    xhr.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) onProgress(event.loaded, event.total);
    });
    xhr.addEventListener('load', () => {
      const body = xhr.response as { error?: unknown; code?: unknown; issues?: unknown } | null;
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(body);
        return;
      }
      const failure = new HttpFailure(
        typeof body?.error === 'string' ? body.error : `The upload failed (${xhr.status}).`,
        typeof body?.code === 'string' ? body.code : 'internal_error',
        xhr.status,
        Array.isArray(body?.issues) ? (body.issues as HttpFailure['issues']) : [],
      );
      reject(failure);
    });
    const offline = () =>
      reject(new HttpFailure('Could not reach svc. Check the connection and try again.', 'offline', 0));
    xhr.addEventListener('error', offline);
    xhr.addEventListener('timeout', offline);
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

/**
 * DELETE on a plain route (the store's logo), with the session cookie and the CSRF header; rejects
 * with an HttpFailure carrying our error body, as uploadFile does.
 */
export async function deleteRoute(url: string): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, { method: 'DELETE', credentials: 'same-origin', headers: plainHeaders() });
  } catch {
    throw new HttpFailure('Could not reach svc. Check the connection and try again.', 'offline', 0);
  }
  if (response.ok) return;
  const body = (await response.json().catch(() => null)) as { error?: unknown; code?: unknown } | null;
  throw new HttpFailure(
    typeof body?.error === 'string' ? body.error : `The request failed (${response.status}).`,
    typeof body?.code === 'string' ? body.code : 'internal_error',
    response.status,
    [],
  );
}

/**
 * GETs a file from a plain route with the mode and CSRF headers (a link could send neither) and
 * hands it to the browser as a download, named as the server's Content-Disposition says.
 */
export async function downloadFile(url: string, fallbackName: string): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, { credentials: 'same-origin', headers: plainHeaders() });
  } catch {
    throw new HttpFailure('Could not reach svc. Check the connection and try again.', 'offline', 0);
  }
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as { error?: unknown; code?: unknown } | null;
    throw new HttpFailure(
      typeof body?.error === 'string' ? body.error : `The download failed (${response.status}).`,
      typeof body?.code === 'string' ? body.code : 'internal_error',
      response.status,
      [],
    );
  }
  const disposition = response.headers.get('content-disposition') ?? '';
  const encoded = /filename\*=UTF-8''([^;]+)/i.exec(disposition)?.[1];
  const link = document.createElement('a');
  link.href = URL.createObjectURL(await response.blob());
  link.download = encoded ? decodeURIComponent(encoded) : fallbackName;
  link.click();
  // The click has started the download; the object URL is not needed once it has read the blob.
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
}

export function apiFailure(error: unknown): ApiFailure {
  if (error instanceof HttpFailure) {
    return {
      code: error.code,
      message: error.message,
      status: error.status,
      issues: error.issues,
      offline: error.status === 0,
    };
  }
  if (error instanceof TRPCClientError) {
    const data = (error as TRPCClientError<AppRouter>).data as
      { code?: string; httpStatus?: number; issues?: Array<{ path: string; message: string }> } | undefined;
    if (!data) {
      return {
        code: 'offline',
        message: 'Could not reach svc. Check the connection and try again.',
        status: 0,
        issues: [],
        offline: true,
      };
    }
    return {
      code: data.code ?? 'internal_error',
      message: error.message,
      status: data.httpStatus ?? 500,
      issues: data.issues ?? [],
      offline: false,
    };
  }
  return {
    code: 'internal_error',
    message: error instanceof Error ? error.message : 'Something went wrong.',
    status: 0,
    issues: [],
    offline: false,
  };
}

/** Whether the session is gone (expired, signed out elsewhere, password reset). */
export function isSignedOut(error: unknown): boolean {
  return apiFailure(error).status === 401;
}

/** Set by the router: sends the seller to sign-in, to come back to where they were. */
let onSignedOut: () => void = () => undefined;
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

/**
 * Set by the router: sends a member whom the store's owner requires to use two-factor sign-in, and
 * who has it off, to the Account page to turn it on (which says why). Queries only: a mutation's
 * refusal (the owner ticking the setting without it) is shown beside its control.
 */
let onEnrolmentRequired: () => void = () => undefined;
export function whenEnrolmentRequired(handler: () => void): void {
  onEnrolmentRequired = handler;
}

export const queryClient = new QueryClient({
  queryCache: new QueryCache({
    onError: (error) => {
      if (isSignedOut(error)) onSignedOut();
      else if (apiFailure(error).code === 'two_factor_enrolment_required') onEnrolmentRequired();
    },
  }),
  mutationCache: new MutationCache({ onError: (error) => isSignedOut(error) && onSignedOut() }),
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      // A 4xx will not change on its own; a lost connection may come back.
      retry: (count, error) => apiFailure(error).offline && count < 2,
    },
    mutations: { retry: false },
  },
});

// The mode switched: every cached answer is the other mode's. Reset, not invalidate: a reset query
// drops its data (no live rows under the test banner while the test ones load), and a fetch still
// on its way with the old header is cancelled; the queries on screen fetch again. The auth router's
// queries (the signed-in user and the CSRF token) are the same in both modes and stay.
onModeSwitch(() => {
  void queryClient.resetQueries({ predicate: (query) => !isAuthQuery(query.queryKey) });
});

/** A tRPC query key is [path, { input, type }]; the path's first part is the router. */
function isAuthQuery(key: readonly unknown[]): boolean {
  const path = key[0];
  return Array.isArray(path) && path[0] === 'auth';
}

export const trpcClient = createTRPCClient<AppRouter>({
  links: [
    httpBatchLink({
      url: '/trpc',
      maxItems: 10,
      // Read at each send: a call made after the switch carries the new mode.
      headers: () => ({ 'x-svc-mode': currentMode(), ...(csrfToken ? { 'x-csrf-token': csrfToken } : {}) }),
      fetch: (url, options) => fetch(url, { ...options, credentials: 'same-origin' }),
    }),
  ],
});

export const trpc = createTRPCOptionsProxy<AppRouter>({ client: trpcClient, queryClient });
