/**
 * Limits every input meets before a service sees it, whatever route it reaches:
 * - JSON text is scanned before it is parsed into objects: nesting deeper than MAX_JSON_DEPTH or
 *   an array of more than MAX_JSON_ARRAY_ITEMS is refused (a body nested 10,000 deep once
 *   overflowed the stack of the adapters' JSON.stringify: a 500 on every operation);
 * - every string of a parsed input (values and keys) is text PostgreSQL can store: no NUL (text
 *   columns refuse it) and no lone UTF-16 surrogate (not encodable as UTF-8);
 * - every number is finite and not -0 (`1e309` parses to Infinity, `-0` reads as a sign error);
 * - a URL is valid percent-encoded UTF-8 without an encoded NUL;
 * - JSON a field carries as text (the cart query parameter) is held to the same rules once decoded
 *   (`readJsonField`): the walk of the input saw only a string, which JSON escapes (`\u0000`,
 *   `\ud800`) keep storable until they are decoded.
 * Each refusal is 400 validation_failed naming the field where there is one.
 */
import { invalidField } from './errors.js';

export const MAX_JSON_DEPTH = 32;
// Above every maxItems of the document (license-key import takes 20,000), so a schema's own limit names its field.
export const MAX_JSON_ARRAY_ITEMS = 50_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;

/**
 * What is wrong with the shape of JSON text (bytes or a string), before it is parsed: too deep,
 * or an array too long. Undefined when neither; the text may still be invalid JSON (the parser
 * decides that). One pass, no allocation per byte.
 */
export function jsonShapeProblem(text: Buffer | string): string | undefined {
  const isString = typeof text === 'string';
  const length = text.length;
  const commas = new Int32Array(MAX_JSON_DEPTH + 1);
  const isArray = new Uint8Array(MAX_JSON_DEPTH + 1);
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < length; i++) {
    const c = isString ? text.charCodeAt(i) : text[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
      continue;
    }
    switch (c) {
      case QUOTE:
        inString = true;
        break;
      case OPEN_ARRAY:
      case OPEN_OBJECT:
        if (++depth > MAX_JSON_DEPTH) return `The JSON is nested deeper than ${MAX_JSON_DEPTH} levels.`;
        isArray[depth] = c === OPEN_ARRAY ? 1 : 0;
        commas[depth] = 0;
        break;
      case CLOSE_ARRAY:
      case CLOSE_OBJECT:
        if (depth > 0) depth--;
        break;
      case COMMA:
        // n commas separate n + 1 items.
        if (depth > 0 && isArray[depth] === 1 && ++commas[depth]! >= MAX_JSON_ARRAY_ITEMS) {
          return `A JSON array has more than ${MAX_JSON_ARRAY_ITEMS} items.`;
        }
        break;
    }
  }
  return undefined;
}

/** 400 validation_failed when the JSON text is too deep or an array too long. */
export function assertJsonShape(text: Buffer | string): void {
  const problem = jsonShapeProblem(text);
  if (problem) throw invalidField('', problem);
}

const SUSPECT = /[\0\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored as text; undefined when it can. */
function stringProblem(value: string): string | undefined {
  if (!SUSPECT.test(value)) return undefined;
  if (value.includes('\0')) return 'Must not contain a NUL character.';
  if (LONE_SURROGATE.test(value)) return 'Must not contain a lone UTF-16 surrogate.';
  return undefined;
}

function numberProblem(value: number): string | undefined {
  if (!Number.isFinite(value)) return 'Must be a finite number.';
  if (Object.is(value, -0)) return 'Must not be -0.';
  return undefined;
}

const join = (path: string, key: string | number) => (path === '' ? String(key) : `${path}.${key}`);

/**
 * The first field of a parsed input whose value cannot be taken (see above), with why; undefined
 * when every value can. Walks arrays and plain objects, keys included.
 */
export function unreadableField(value: unknown, path = ''): { path: string; message: string } | undefined {
  switch (typeof value) {
    case 'string': {
      const message = stringProblem(value);
      return message ? { path, message } : undefined;
    }
    case 'number': {
      const message = numberProblem(value);
      return message ? { path, message } : undefined;
    }
    case 'object': {
      if (value === null) return undefined;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const found = unreadableField(value[i], join(path, i));
          if (found) return found;
        }
        return undefined;
      }
      if (Buffer.isBuffer(value) || value instanceof Date) return undefined;
      for (const key of Object.keys(value)) {
        const keyMessage = stringProblem(key);
        if (keyMessage)
          return {
            path: join(path, key.replace(/[\0\uD800-\uDFFF]/g, '\uFFFD')),
            message: `Field name: ${keyMessage}`,
          };
        const found = unreadableField((value as Record<string, unknown>)[key], join(path, key));
        if (found) return found;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** 400 validation_failed naming the first field of `value` that cannot be taken. */
export function assertReadable(value: unknown): void {
  const found = unreadableField(value);
  if (found) throw invalidField(found.path, found.message);
}

/**
 * The JSON text of a field (a query parameter such as `cart`) decoded as a JSON body is: its shape
 * checked before it is parsed, then parsed, then every value and field name walked as above. Each
 * refusal is 400 validation_failed naming where, below the field (`cart`, `cart.0.productId`).
 * The schema the field names checks the rest.
 */
export function readJsonField(field: string, text: string): unknown {
  const problem = jsonShapeProblem(text);
  if (problem) throw invalidField(field, problem);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidField(field, 'Not JSON.');
  }
  const found = unreadableField(value, field);
  if (found) throw invalidField(found.path, found.message);
  return value;
}

/**
 * 400 unless the URL (path and query) is valid percent-encoded UTF-8 without an encoded NUL: a
 * `%ff` or an encoded lone surrogate (`%ED%A0%80`) cannot be decoded into text.
 */
export function assertReadableUrl(url: string): void {
  if (!url.includes('%')) return;
  if (/%00/.test(url)) throw invalidField('', 'The URL must not contain an encoded NUL (%00).');
  try {
    decodeURIComponent(url);
  } catch {
    throw invalidField('', 'The URL is not valid percent-encoded UTF-8.');
  }
}
