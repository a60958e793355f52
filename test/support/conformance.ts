/**
 * Response conformance: every answer a test receives from a svc server that test/support/server.ts
 * started is checked against openapi/openapi.json. A vitest setup file (test/support/conformance-setup.ts)
 * wraps globalThis.fetch once, so every black-box test (and every SDK client, which calls
 * globalThis.fetch) is checked, with no exemptions list:
 * - the operation is found by method and path template; a path under /api/ that the document
 *   does not name is a failure, unless the answer is 404 in our error body (an unknown route: the
 *   server says so in the documented shape, and there is no operation to hold it to);
 * - the status is declared for the operation;
 * - a JSON body validates against the declared schema of that status (Ajv, JSON Schema 2020-12,
 *   with formats); a JSON answer where the document declares no JSON body fails too;
 * - every header the declaration marks required is present.
 * Out of scope: /trpc (not in the document), paths outside /api/ (pages, docs, ops), and CORS
 * preflights (OPTIONS: answered by the CORS layer for any route, not an operation).
 * A failure throws from fetch, so the awaiting test fails with method, path, status and the error.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, any>;

const DOCUMENT_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../openapi/openapi.json');
const PORTS_KEY = Symbol.for('svc.test.serverPorts');

/** The ports of the svc servers started in this worker (filled by test/support/server.ts). */
export function startedServerPorts(): Set<number> {
  const holder = globalThis as unknown as Record<symbol, Set<number> | undefined>;
  return (holder[PORTS_KEY] ??= new Set<number>());
}

export class NonConformingResponse extends Error {
  override name = 'NonConformingResponse';
}

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  literalLength: number;
  operation: Json;
}

let loaded:
  { document: Json; operations: Operation[]; ajv: Ajv2020; validators: Map<string, ValidateFunction> } | undefined;

function load() {
  if (loaded) return loaded;
  const document = JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as Json;
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries<Json>(document.paths ?? {})) {
    const source = template
      .split(/\{\w+\}/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]+');
    for (const [method, operation] of Object.entries(item) as [string, Json][]) {
      if (typeof operation !== 'object' || !operation?.responses) continue;
      operations.push({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${source}/?$`),
        literalLength: template.replace(/\{\w+\}/g, '').length,
        operation,
      });
    }
  }
  // A literal segment wins over a parameter (find-my-way's rule): the most literal template first.
  operations.sort((a, b) => b.literalLength - a.literalLength);
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
  addFormats(ajv);
  ajv.addSchema({ $id: 'svc-openapi', components: document.components }, 'svc-openapi');
  loaded = { document, operations, ajv, validators: new Map() };
  return loaded;
}

/** `#/components/...` refs point into the registered document. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (schema && typeof schema === 'object') {
    return Object.fromEntries(
      Object.entries(schema).map(([key, value]) => [
        key,
        key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `svc-openapi${value}` : rebase(value),
      ]),
    );
  }
  return schema;
}

function validator(key: string, schema: Json): ValidateFunction {
  const state = load();
  let validate = state.validators.get(key);
  if (!validate) {
    validate = state.ajv.compile(rebase(schema) as Json);
    state.validators.set(key, validate);
  }
  return validate;
}

function findOperation(method: string, pathname: string): { operation?: Operation; pathKnown: boolean } {
  const { operations } = load();
  const lookup = method === 'HEAD' ? 'GET' : method;
  const onPath = operations.filter((candidate) => candidate.pattern.test(pathname));
  return { operation: onPath.find((candidate) => candidate.method === lookup), pathKnown: onPath.length > 0 };
}

const isJson = (contentType: string | null) => !!contentType && /^application\/([\w.+-]+\+)?json\b/i.test(contentType);

function describeErrors(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .slice(0, 8)
    .map(
      (error) =>
        `${error.instancePath || '(body)'} ${error.message ?? ''}${error.params && Object.keys(error.params).length ? ` ${JSON.stringify(error.params)}` : ''}`,
    )
    .join('; ');
}

/** Whether a request to `url` is one the check applies to. */
export function isCheckedUrl(url: URL): boolean {
  return (
    (url.hostname === '127.0.0.1' || url.hostname === 'localhost') &&
    startedServerPorts().has(Number(url.port)) &&
    url.pathname.startsWith('/api/')
  );
}

/** Checks one answer; throws NonConformingResponse saying what does not conform. */
export async function checkResponse(method: string, url: URL, response: Response): Promise<void> {
  method = method.toUpperCase();
  if (method === 'OPTIONS') return;
  const where = `${method} ${url.pathname} -> ${response.status}`;
  const fail = (why: string): never => {
    throw new NonConformingResponse(`response does not conform to openapi/openapi.json: ${where}: ${why}`);
  };
  const contentType = response.headers.get('content-type');
  const text = method === 'HEAD' ? '' : await response.clone().text();
  const parseJson = (): unknown => {
    try {
      return JSON.parse(text);
    } catch (error) {
      return fail(`the body is not JSON though its Content-Type is ${contentType}: ${(error as Error).message}`);
    }
  };
  const { document } = load();
  const { operation: found, pathKnown } = findOperation(method, url.pathname);
  if (!found) {
    // An unknown route (or method): 404 in our error body is the documented answer.
    if (response.status !== 404)
      fail(pathKnown ? `the document has no ${method} operation on this path` : 'the path is not in the document');
    if (!isJson(contentType))
      fail(`an unknown route answered 404 with ${contentType ?? 'no Content-Type'}, not our JSON error body`);
    const validate = validator('#/components/schemas/Error', { $ref: '#/components/schemas/Error' });
    if (!validate(parseJson())) fail(`the 404 body is not our error body: ${describeErrors(validate)}`);
    return;
  }
  const responses = found.operation.responses as Json;
  const statusKey = String(response.status);
  const declared = (responses[statusKey] ?? responses[`${statusKey[0]}XX`] ?? responses.default) as Json | undefined;
  if (!declared)
    fail(
      `status ${response.status} is not declared for ${found.method} ${found.template} (declared: ${Object.keys(responses).join(', ')})`,
    );
  const resolved = (declared!.$ref ? resolvePointer(document, declared!.$ref) : declared) as Json;
  for (const [name, header] of Object.entries((resolved.headers ?? {}) as Json)) {
    if ((header as Json).required && !response.headers.has(name)) fail(`the required header ${name} is missing`);
  }
  if (method === 'HEAD' || text === '') {
    return;
  }
  const content = (resolved.content ?? {}) as Json;
  if (isJson(contentType)) {
    const mediaType = Object.keys(content).find((type) => isJson(type));
    if (!mediaType) fail(`a JSON body where the document declares ${Object.keys(content).join(', ') || 'no body'}`);
    const schema = content[mediaType!].schema as Json | undefined;
    if (!schema) return;
    const validate = validator(`${found.method} ${found.template} ${statusKey} ${mediaType}`, schema);
    if (!validate(parseJson())) fail(`the body does not match the declared schema: ${describeErrors(validate)}`);
    return;
  }
  const baseType = contentType?.split(';')[0]!.trim().toLowerCase();
  const matches = Object.keys(content).some(
    (type) =>
      type === '*/*' ||
      type.toLowerCase() === baseType ||
      (type.endsWith('/*') && baseType?.startsWith(type.slice(0, -1))),
  );
  if (!matches)
    fail(
      `a ${contentType ?? 'untyped'} body where the document declares ${Object.keys(content).join(', ') || 'no body'}`,
    );
}

function resolvePointer(document: Json, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, part) => (node as Json)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], document);
}

/** Wraps globalThis.fetch (once per worker) so every checked answer is checked before the caller sees it. */
export function installConformanceCheck(): void {
  const holder = globalThis as unknown as { fetch: typeof fetch; __svcConformanceInstalled?: boolean };
  if (holder.__svcConformanceInstalled) return;
  holder.__svcConformanceInstalled = true;
  const original = globalThis.fetch.bind(globalThis);
  globalThis.fetch = async function conformingFetch(
    input: string | URL | Request,
    init?: RequestInit,
  ): Promise<Response> {
    const response = await original(input, init);
    let url: URL;
    try {
      url = new URL(response.url || (input instanceof Request ? input.url : String(input)));
    } catch {
      return response;
    }
    if (!isCheckedUrl(url)) return response;
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    await checkResponse(method, url, response);
    return response;
  };
}
