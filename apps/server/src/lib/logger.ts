/**
 * pino for the HTTP server, the worker and the CLI: one censoring of secrets, one request-line
 * shape, and one rule for the format. A person at a terminal reads pretty lines
 * (pino-pretty); anything else (a pipe, a file, a log shipper) and production always get
 * one JSON object per line.
 */
import type { FastifyBaseLogger } from 'fastify';
import { pino, type DestinationStream, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import { databaseFailure, framesOf } from './database-failure.js';

export type Logger = FastifyBaseLogger;

export type LogFormat = 'json' | 'pretty';

const CENSOR = '[redacted]';

/**
 * Whether a name (a query parameter, a field of a tRPC input, a header) says its value is a
 * credential or personal data. Read as words (`licenseKey`, `license_key` and `X-License-Key` are
 * `license key`): credential words anywhere (`token`, `secret`, `password`, `signature`...), short
 * ones only as a word of their own (`sid`, `otp`, `auth`, `session`, `sig`, `email`: not `inside`,
 * `author`, `design`), `key` as the last word (`api_key`, `private_key`, not `key_id`), and `code`
 * alone (a sign-in code; not `country_code`). Ordinary ids (`orderId`, `keyId`) stay readable.
 */
const SECRET_NAME =
  /token|secret|passw(?:or)?d|passphrase|api[_.-]?key|credential|cookie|csrf|xsrf|jwt|signature|authorization|(?:^|[_.-])(?:pwd|otp|auth|session|sid|sig|e[_.-]?mails?)(?:[_.-]|$)|(?:^|[_.-])keys?$|^code$/;

/** Names already judged: a request line tests the same few names again and again. */
const secretNames = new Map<string, boolean>();
const SECRET_NAMES_KEPT = 2048;

export function isSecretName(name: string): boolean {
  let secret = secretNames.get(name);
  if (secret === undefined) {
    let words = name;
    if (words.includes('%')) {
      try {
        words = decodeURIComponent(words);
      } catch {
        // not percent-encoded UTF-8: judged as written
      }
    }
    secret = SECRET_NAME.test(words.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase());
    // Bounded: names a client makes up must not grow it without end.
    if (secretNames.size < SECRET_NAMES_KEPT) secretNames.set(name, secret);
  }
  return secret;
}

/** Headers whose value is a URL that may carry secrets in its query: redacted as the request line is. */
const URL_HEADERS = ['referer', 'location', 'content-location'];

/**
 * The headers with every credential's value replaced (by the rule of `isSecretName`: `authorization`,
 * `cookie`, `x-api-key`, `x-csrf-token`, `idempotency-key`...) and the query of a `Referer` redacted;
 * the same object when there is nothing to hide.
 */
function censorHeaders(headers: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!headers) return headers;
  let censored: Record<string, unknown> | undefined;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    let clean: unknown = value;
    if (isSecretName(name)) clean = CENSOR;
    else if (typeof value === 'string' && URL_HEADERS.includes(name)) clean = redactUrl(value);
    if (clean === value) continue;
    censored ??= { ...headers };
    censored[name] = clean;
  }
  return censored ?? headers;
}

/** Fields that carry a secret, one level down in whatever a line logs (`input.password`, `err.token`). */
const SECRET_FIELDS = [
  'password',
  'passwd',
  'pwd',
  'secret',
  'key',
  'token',
  'apiKey',
  'csrfToken',
  'checkoutToken',
  'accessToken',
  'refreshToken',
  'licenseKey',
  'privateKey',
  'otp',
  'jwt',
];

/** A value with its secret fields replaced (an error keeps its type, message and stack); the same value when it has none. */
function censorFields(value: object): object {
  let censored: Record<string, unknown> | undefined;
  for (const field of SECRET_FIELDS) {
    if (!(field in value) || (value as Record<string, unknown>)[field] === undefined) continue;
    censored ??=
      value instanceof Error
        ? { type: value.name, message: value.message, stack: value.stack, ...(value as object) }
        : { ...value };
    censored[field] = CENSOR;
  }
  return censored ?? value;
}

/**
 * Every line's object, before its serializers: the secret fields of each value it holds replaced
 * (what pino's `*.password` redaction did, without its per-line copy of the paths; a tenth of
 * the License API's request time went to it).
 */
function censorLine(object: Record<string, unknown>): Record<string, unknown> {
  let censored: Record<string, unknown> | undefined;
  for (const name in object) {
    const value = object[name];
    if (value === null || typeof value !== 'object') continue;
    const clean = censorFields(value);
    if (clean === value) continue;
    censored ??= { ...object };
    censored[name] = clean;
  }
  return censored ?? object;
}

/** Below this depth a tRPC input is not looked into: it is redacted whole (the API nests far less). */
const MAX_INPUT_DEPTH = 32;

/** The JSON value with the value of every field named as a secret replaced; the same value when there is none. */
function censorJson(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_INPUT_DEPTH) return CENSOR;
  if (Array.isArray(value)) {
    const items = value as unknown[];
    let censored: unknown[] | undefined;
    for (let i = 0; i < items.length; i++) {
      const clean = censorJson(items[i], depth + 1);
      if (clean === items[i]) continue;
      censored ??= [...items];
      censored[i] = clean;
    }
    return censored ?? items;
  }
  let censored: Record<string, unknown> | undefined;
  for (const name of Object.keys(value)) {
    const field = (value as Record<string, unknown>)[name];
    const clean = field !== null && isSecretName(name) ? CENSOR : censorJson(field, depth + 1);
    if (clean === field) continue;
    censored ??= { ...value };
    censored[name] = clean;
  }
  return censored ?? value;
}

const ENCODED_CENSOR = encodeURIComponent(CENSOR);

/**
 * A tRPC GET's `input` (percent-encoded JSON, one call's input or a batch's `{"0":...,"1":...}`)
 * with its secret fields redacted by the rule of query parameters, encoded again; undefined when
 * it holds none. An input that cannot be read is redacted whole: nothing in it can be vouched for.
 */
function redactedInput(value: string): string | undefined {
  let input: unknown;
  try {
    input = JSON.parse(decodeURIComponent(value));
  } catch {
    return CENSOR;
  }
  const clean = censorJson(input, 0);
  if (clean === input) return undefined;
  // The marker as it reads elsewhere in the line: `"token":"[redacted]"`.
  return encodeURIComponent(JSON.stringify(clean)).replaceAll(ENCODED_CENSOR, CENSOR);
}

/**
 * The URL with the value of every query parameter named as a secret (checkout tokens, signed links,
 * API keys passed where a header belongs, buyer e-mails, codes) redacted, and the secret fields of
 * a tRPC `input`; the same string when there is none. Runs on every request line: one scan of the
 * query, and JSON is parsed only for an `input` parameter.
 */
export function redactUrl(url: string | undefined): string | undefined {
  if (!url) return url;
  const query = url.indexOf('?');
  if (query < 0) return url;
  const hash = url.indexOf('#', query);
  const end = hash < 0 ? url.length : hash;
  let out = '';
  let copied = 0;
  for (let start = query + 1; start < end;) {
    let next = url.indexOf('&', start);
    if (next < 0 || next > end) next = end;
    const equals = url.indexOf('=', start);
    if (equals >= 0 && equals < next) {
      const name = url.slice(start, equals);
      const redacted = isSecretName(name)
        ? CENSOR
        : name === 'input'
          ? redactedInput(url.slice(equals + 1, next))
          : undefined;
      if (redacted !== undefined) {
        out += url.slice(copied, equals + 1) + redacted;
        copied = next;
      }
    }
    start = next + 1;
  }
  return copied === 0 ? url : out + url.slice(copied);
}

interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
  headers?: Record<string, unknown>;
}

/**
 * An error as a line carries it (pino's own shape). A database error, or one caused by it, by the
 * names of what refused and where (SQLSTATE, constraint, table, the stack's frames) and nothing
 * else: its message and its causes' messages quote the statement with its parameters, and
 * PostgreSQL's `detail` the row it refused (lib/database-failure.ts).
 */
function serializeError(value: unknown): unknown {
  const failure = databaseFailure(value);
  if (!failure) return pino.stdSerializers.err(value as Error);
  const named = [failure.constraint && `constraint ${failure.constraint}`, failure.table && `table ${failure.table}`];
  const where = named.filter(Boolean).join(', ');
  return {
    type: (value as { name?: unknown }).name,
    // Where pino's shape has the error's code (57P01: the server is shutting down; ECONNREFUSED).
    code: failure.sqlState ?? failure.code,
    message: failure.sqlState
      ? `the database refused a statement: SQLSTATE ${failure.sqlState}${where ? ` (${where})` : ''}`
      : `a statement failed: ${failure.reason}`,
    database: failure,
    stack: framesOf(value),
  };
}

/** Requests are logged with the path the client sent and their headers (credentials censored), so a failed call can be traced. */
const serializers = {
  err: serializeError,
  req: (req: LoggedRequest) => ({
    method: req.method,
    url: redactUrl(req.url),
    remoteAddress: req.ip,
    headers: censorHeaders(req.headers),
  }),
  res: (res: { headers?: Record<string, unknown> } & Record<string, unknown>) =>
    res.headers ? { ...res, headers: censorHeaders(res.headers) } : res,
};

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    formatters: { log: censorLine },
    serializers,
  };
}

/**
 * JSON in production whatever is asked; otherwise LOG_FORMAT when set, else pretty when
 * standard output is a terminal.
 */
export function logFormat(env: NodeJS.ProcessEnv = process.env, isTerminal = process.stdout.isTTY === true): LogFormat {
  if (env.NODE_ENV === 'production') return 'json';
  if (env.LOG_FORMAT === 'json' || env.LOG_FORMAT === 'pretty') return env.LOG_FORMAT;
  return isTerminal ? 'pretty' : 'json';
}

interface PrettyLine {
  msg?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
}

/** A request line reads `GET /api/store/demo 200 3.1 ms`; other lines keep their message. */
function prettyMessage(line: PrettyLine, messageKey: string): string {
  // pino-pretty parsed the line from JSON; pino's messages are strings, anything else shows as JSON.
  const value = (line as Record<string, unknown>)[messageKey];
  const message =
    typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
  if (line.req && line.res && typeof line.responseTime === 'number') {
    return `${line.req.method} ${line.req.url} ${line.res.statusCode} ${line.responseTime.toFixed(1)} ms`;
  }
  return message;
}

function prettyStream(destination: DestinationStream | undefined): DestinationStream {
  return pretty({
    colorize: process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,req,res,responseTime,reqId',
    messageFormat: prettyMessage as never,
    singleLine: true,
    // Written as each line comes: a crash loses nothing, and lines keep their order with stderr.
    sync: true,
    ...(destination ? { destination } : {}),
  });
}

/** Log lines are written in blocks of this size (a busy server)... */
const LOG_BLOCK_BYTES = 8192;
/** ...or after this long (a quiet one). */
const LOG_FLUSH_MS = 100;

export function createLogger(
  level: string,
  opts: { format?: LogFormat; destination?: DestinationStream } = {},
): Logger {
  const format = opts.format ?? logFormat();
  const stream = format === 'pretty' ? prettyStream(opts.destination) : opts.destination;
  // JSON to stdout, written asynchronously in blocks: lines wait for 8 KiB of others, or for at most
  // LOG_FLUSH_MS, and go out in one write (one system call per request line was a tenth of a busy
  // server's CPU; one write per few lines still cost a License API validation 4 %). pino flushes
  // what is pending when the process exits.
  return pino(
    loggerOptions(level),
    stream ?? pino.destination({ dest: 1, sync: false, minLength: LOG_BLOCK_BYTES, periodicFlush: LOG_FLUSH_MS }),
  );
}
