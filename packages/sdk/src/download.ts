/**
 * Binary answers (an invoice's PDF): not procedures, so not through tRPC, but a GET of the REST
 * path with the client's headers. Failures are the same `SvcApiError`s as every call's (our error
 * body's code and message), and retries follow a read's rules: connection failures, timeouts,
 * 5xx and 429, waiting `Retry-After` or a backoff.
 */
import { apiErrorFor, type SvcApiError } from './api-errors.js';
import { backoffMs, parseRetryAfter, type ClientOptions, type RequestOptions } from './transport.js';

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RETRY_AFTER_SECONDS = 60;

export type Download = (path: string, name: string, options?: RequestOptions) => Promise<Uint8Array>;

/** A GET of `<baseUrl>/api<path>` answering its bytes; `name` names the call in errors (`orders.invoice`). */
export function createDownload(settings: ClientOptions & { headers: Record<string, string> }): Download {
  const baseUrl = settings.baseUrl.replace(/\/+$/, '');
  return async (path, name, options = {}) => {
    const fetchFn = settings.fetch ?? globalThis.fetch;
    const maxRetries = options.maxRetries ?? settings.maxRetries ?? DEFAULT_MAX_RETRIES;
    const timeoutMs = options.timeoutMs ?? settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxRetryAfter = settings.maxRetryAfterSeconds ?? DEFAULT_MAX_RETRY_AFTER_SECONDS;
    for (let retry = 0; ; retry++) {
      let error: SvcApiError;
      const controller = new AbortController();
      const onAbort = () => controller.abort(options.signal?.reason);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => controller.abort(), timeoutMs);
      try {
        const response = await fetchFn(`${baseUrl}/api${path}`, {
          method: 'GET',
          headers: settings.headers,
          signal: controller.signal,
        });
        if (response.ok) return new Uint8Array(await response.arrayBuffer());
        const body = (await response.json().catch(() => null)) as {
          error?: string;
          code?: string;
          issues?: Array<{ path: string; message: string }>;
        } | null;
        error = apiErrorFor({
          status: response.status,
          code: body?.code ?? (response.status >= 500 ? 'internal_error' : 'unexpected_response'),
          message: body?.error ?? `HTTP ${response.status} from ${name}`,
          retryAfter: parseRetryAfter(response.headers.get('retry-after')),
          issues: body?.issues,
          requestId: response.headers.get('x-request-id') ?? undefined,
          procedure: name,
        });
      } catch (failure) {
        if (options.signal?.aborted)
          throw apiErrorFor({ code: 'aborted', message: `The call to ${name} was cancelled.`, procedure: name });
        error = controller.signal.aborted
          ? apiErrorFor({ code: 'timeout', message: `No answer from ${name} within ${timeoutMs} ms.`, procedure: name })
          : apiErrorFor({
              code: 'connection_failed',
              message: `Could not reach the service for ${name}: ${failure instanceof Error ? failure.message : String(failure)}`,
              procedure: name,
              cause: failure,
            });
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
      }
      const retryable = error.status === undefined || error.status === 429 || error.status >= 500;
      if (retry >= maxRetries || !retryable) throw error;
      if (error.retryAfter !== undefined && error.retryAfter > maxRetryAfter) throw error;
      const waitMs = error.retryAfter !== undefined ? error.retryAfter * 1000 : backoffMs(retry + 1);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  };
}
