/**
 * The one way the clients reach the API: `@trpc/client` against `/trpc` (a plain `httpLink`,
 * one request per call), under a loop that turns every failure into an `SvcApiError`, retries
 * what is safe to retry, and sends an `Idempotency-Key` with the order-creating calls.
 *
 * Retries (at most `maxRetries`, default 2): connection failures, timeouts, 5xx and 429 for
 * reads and for calls that are safe to repeat (updates, and creations carrying an
 * Idempotency-Key, which the server answers once); only 429 (refused before anything ran) for
 * the rest. The wait is the answer's `Retry-After` when it gave one, else an exponential
 * backoff with jitter; a `Retry-After` beyond `maxRetryAfterSeconds` is not waited for.
 */
import { createTRPCUntypedClient, httpLink, TRPCClientError } from '@trpc/client';
import { apiErrorFor, SvcApiError, type SvcApiErrorIssue } from './api-errors.js';
import type { ApiProcedures } from './generated/api.js';

export type ProcedurePath = keyof ApiProcedures;
export type ProcedureInput<P extends ProcedurePath> = ApiProcedures[P]['input'];
export type ProcedureOutput<P extends ProcedurePath> = ApiProcedures[P]['output'];

/** A `fetch` as the platform gives it; pass your own to add tracing, proxies or mocks. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** Where the service answers, such as `https://svc.example` (no `/api`, no `/trpc`). */
  baseUrl: string;
  /** Defaults to the global `fetch` (Node 18+, browsers, edge runtimes). */
  fetch?: FetchLike | undefined;
  /** Retries after the first attempt; 0 turns retrying off. Default 2. */
  maxRetries?: number | undefined;
  /** Per attempt, in milliseconds. Default 30 000. */
  timeoutMs?: number | undefined;
  /** The longest `Retry-After` (seconds) worth waiting for; longer ones fail at once. Default 60. */
  maxRetryAfterSeconds?: number | undefined;
}

/** Options for one call. */
export interface RequestOptions {
  /** Cancels the call (and any retry wait). */
  signal?: AbortSignal | undefined;
  /** Overrides the client's timeout for this call. */
  timeoutMs?: number | undefined;
  /** Overrides the client's retry count for this call. */
  maxRetries?: number | undefined;
}

/** Options for a call that creates an order. */
export interface CreateRequestOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`; generated once per call when omitted, and kept across that
   * call's retries. Pass your own (1-255 printable ASCII characters) to make a retry of your
   * own, after a crash say, return the first answer instead of a second order.
   */
  idempotencyKey?: string | undefined;
}

/** How a call may be repeated after a failure that may have reached the server. */
export type RetryPolicy = 'safe' | 'rate-limit-only';

export interface CallSpec<P extends ProcedurePath = ProcedurePath> {
  /** The procedure's kind, checked against the router's. */
  type: ApiProcedures[P]['type'];
  retry: RetryPolicy;
  /** Generate an Idempotency-Key when the caller gave none. */
  idempotent?: boolean;
}

export interface TransportSettings extends ClientOptions {
  /** Headers for every request (the API key). */
  headers?: Record<string, string> | undefined;
  /** `include` for cookie sessions across origins (the customer client in a browser). */
  credentials?: 'include' | 'omit' | 'same-origin' | undefined;
  /** Keep cookies the server sets and send them back: the customer session outside a browser. */
  cookieJar?: boolean | undefined;
}

export interface Transport {
  call<P extends ProcedurePath>(
    path: P,
    input: ProcedureInput<P>,
    spec: CallSpec<P>,
    options?: CreateRequestOptions,
  ): Promise<ProcedureOutput<P>>;
  /** Forget the cookies the jar holds (sign-out). */
  clearCookies(): void;
}

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RETRY_AFTER_SECONDS = 60;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;

interface OpContext {
  idempotencyKey?: string;
  [key: string]: unknown;
}

/** A random key: UUID where the platform has one (not on plain-http pages), else 128 random bits. */
export function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  const bytes = new Uint8Array(16);
  c.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function trimBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new SvcApiError({
      code: 'invalid_base_url',
      message: `baseUrl must be an absolute http(s) URL; got ${JSON.stringify(baseUrl)}.`,
      procedure: '',
    });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new SvcApiError({
      code: 'invalid_base_url',
      message: `baseUrl must be http or https; got ${url.protocol}`,
      procedure: '',
    });
  }
  const trimmed = url.href.replace(/\/+$/, '');
  // The clients call `<baseUrl>/trpc`. A base ending in `/api`, where the REST endpoints live,
  // would reach `/api/trpc`, and the first call would fail as a 404 or a connection error that
  // says nothing about this option: refuse it at construction, naming the address meant.
  if (/\/api$/.test(url.pathname.replace(/\/+$/, ''))) {
    const meant = `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/api$/, '')}`;
    throw new SvcApiError({
      code: 'invalid_base_url',
      message: `baseUrl is the service's address without /api (${meant}); got ${JSON.stringify(baseUrl)}.`,
      procedure: '',
    });
  }
  return trimmed;
}

/** Seconds from a `Retry-After` header: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** Backoff before retry number `attempt` (1-based): 0.5 s, 1 s, 2 s ... up to 8 s, +-25 % jitter. */
export function backoffMs(attempt: number, random = Math.random): number {
  const base = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
  return Math.round(base * (0.75 + random() * 0.5));
}

/** A cookie jar for one origin: enough for the `svc_customer` and `svc_checkout` sessions. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  header(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  store(response: Response): void {
    const headers = response.headers as Headers & { getSetCookie?: () => string[] };
    const lines = typeof headers.getSetCookie === 'function' ? headers.getSetCookie() : [];
    for (const line of lines) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired =
        value === '' ||
        attributes.some((attribute) => {
          const [key = '', val = ''] = attribute.split('=').map((part) => part.trim());
          if (key.toLowerCase() === 'max-age') return Number(val) <= 0;
          if (key.toLowerCase() === 'expires') return Date.parse(val) <= Date.now();
          return false;
        });
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  clear(): void {
    this.cookies.clear();
  }
}

/** Waits `ms`; answers the signal's reason instead, at once, when the signal aborts first. */
function sleep(
  ms: number,
  signal: AbortSignal | undefined,
): Promise<{ aborted: false } | { aborted: true; reason: unknown }> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve({ aborted: true, reason: signal.reason });
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve({ aborted: false });
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve({ aborted: true, reason: signal?.reason });
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

interface ErrorShapeData {
  code?: string;
  httpStatus?: number;
  issues?: SvcApiErrorIssue[];
}

export function createTransport(settings: TransportSettings): Transport {
  const baseUrl = trimBaseUrl(settings.baseUrl);
  // Missing in old browsers and runtimes, whatever the declarations say.
  const platformFetch: FetchLike | undefined = settings.fetch ?? globalThis.fetch;
  if (typeof platformFetch !== 'function') {
    throw new SvcApiError({
      code: 'fetch_unavailable',
      message: 'No global fetch here: pass `fetch` in the client options.',
      procedure: '',
    });
  }
  const jar = settings.cookieJar ? new CookieJar() : undefined;

  const fetchWrapper = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    const cookie = jar?.header();
    if (cookie) headers.set('cookie', cookie);
    const requestInit: RequestInit = { ...init, headers };
    if (settings.credentials) requestInit.credentials = settings.credentials;
    const target = typeof url === 'string' ? url : 'href' in url ? url.href : url.url;
    const response = await platformFetch(target, requestInit);
    jar?.store(response);
    if (!(response.headers.get('content-type') ?? '').includes('application/json')) {
      // Not the API's answer (a proxy's HTML 502, say): say so instead of a JSON parse error.
      throw unexpectedResponse(response, procedureOf(target));
    }
    return response;
  };

  const client = createTRPCUntypedClient({
    links: [
      httpLink({
        url: `${baseUrl}/trpc`,
        fetch: fetchWrapper,
        headers: ({ op }) => {
          const headers: Record<string, string> = { ...settings.headers };
          const key = (op.context as OpContext).idempotencyKey;
          if (key) headers['idempotency-key'] = key;
          return headers;
        },
      }),
    ],
  });

  async function attempt(
    path: string,
    type: 'query' | 'mutation',
    input: unknown,
    context: OpContext,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<unknown> {
    const controller = new AbortController();
    let timedOut = false;
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      const options = { signal: controller.signal, context };
      return type === 'query' ? await client.query(path, input, options) : await client.mutation(path, input, options);
    } catch (error) {
      throw toApiError(error, path, { timedOut, signal, timeoutMs });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  return {
    async call(path, input, spec, options = {}) {
      const type = spec.type;
      const maxRetries = options.maxRetries ?? settings.maxRetries ?? DEFAULT_MAX_RETRIES;
      const timeoutMs = options.timeoutMs ?? settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const maxRetryAfter = settings.maxRetryAfterSeconds ?? DEFAULT_MAX_RETRY_AFTER_SECONDS;
      const context: OpContext = {};
      if (options.idempotencyKey !== undefined) context.idempotencyKey = options.idempotencyKey;
      else if (spec.idempotent) context.idempotencyKey = newIdempotencyKey();
      for (let retry = 0; ; retry++) {
        try {
          return (await attempt(path, type, input, context, timeoutMs, options.signal)) as ProcedureOutput<typeof path>;
        } catch (error) {
          const apiError = error as SvcApiError;
          if (retry >= maxRetries || !isRetryable(apiError, spec.retry)) throw apiError;
          if (apiError.retryAfter !== undefined && apiError.retryAfter > maxRetryAfter) throw apiError;
          const waitMs = apiError.retryAfter !== undefined ? apiError.retryAfter * 1000 : backoffMs(retry + 1);
          const slept = await sleep(waitMs, options.signal);
          if (slept.aborted) throw abortedError(path, slept.reason);
        }
      }
    },
    clearCookies() {
      jar?.clear();
    },
  };
}

function isRetryable(error: SvcApiError, policy: RetryPolicy): boolean {
  if (error.code === 'aborted') return false;
  if (error.status === 429) return true;
  if (policy === 'rate-limit-only') return false;
  if (error.status === undefined) return true; // no answer: connection failure or timeout
  // A concurrent request holds the same Idempotency-Key: ours answers when it is done.
  if (error.status === 409 && error.code === 'idempotency_key_in_use') return true;
  return error.status >= 500;
}

function abortedError(procedure: string, reason: unknown): SvcApiError {
  return apiErrorFor({ code: 'aborted', message: `The call to ${procedure} was cancelled.`, procedure, cause: reason });
}

function procedureOf(url: string): string {
  const match = /\/trpc\/([^?]+)/.exec(url);
  return match?.[1] ? decodeURIComponent(match[1]) : '';
}

function unexpectedResponse(response: Response, procedure: string): SvcApiError {
  const status = response.status >= 400 ? response.status : 502;
  return apiErrorFor({
    status,
    code: status === 503 ? 'service_unavailable' : status >= 500 ? 'internal_error' : 'unexpected_response',
    message: `Unexpected answer from ${procedure || 'the service'}: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}, not JSON.`,
    retryAfter: parseRetryAfter(response.headers.get('retry-after')),
    requestId: response.headers.get('x-request-id') ?? undefined,
    procedure,
  });
}

interface AttemptState {
  timedOut: boolean;
  signal: AbortSignal | undefined;
  timeoutMs: number;
}

/** Every failure as an SvcApiError; the tRPC client's own error never reaches the caller. */
function toApiError(error: unknown, procedure: string, state: AttemptState): SvcApiError {
  if (error instanceof SvcApiError) return error;
  if (error instanceof TRPCClientError) {
    if (error.cause instanceof SvcApiError) return error.cause;
    const data = (error.data ?? undefined) as ErrorShapeData | undefined;
    const response = (error.meta as { response?: Response } | undefined)?.response;
    if (data?.code && typeof data.httpStatus === 'number') {
      return apiErrorFor({
        status: data.httpStatus,
        code: data.code,
        message: error.message,
        retryAfter: parseRetryAfter(response?.headers.get('retry-after') ?? null),
        issues: data.issues,
        requestId: response?.headers.get('x-request-id') ?? undefined,
        procedure,
      });
    }
  }
  if (state.signal?.aborted) return abortedError(procedure, state.signal.reason);
  if (state.timedOut)
    return apiErrorFor({
      code: 'timeout',
      message: `No answer from ${procedure} within ${state.timeoutMs} ms.`,
      procedure,
    });
  // No answer: keep the network error (DNS, refused connection, reset) as the cause.
  const network = error instanceof TRPCClientError && error.cause !== undefined ? error.cause : error;
  const detail =
    network instanceof Error
      ? network.cause instanceof Error
        ? `${network.message} (${network.cause.message})`
        : network.message
      : String(network);
  return apiErrorFor({
    code: 'connection_failed',
    message: `Could not reach the service for ${procedure}: ${detail}`,
    procedure,
    cause: network,
  });
}
