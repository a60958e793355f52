/**
 * Keeps JSON inputs strictly typed. trpc-to-openapi's REST adapter switched on coercion for
 * number, boolean, bigint and date fields the first time a REST request reached a procedure, by
 * writing `_def.coerce = true` into the shared zod schema, after which `"false"` parsed as `true`
 * on both transports. REST is our own adapter now (http/rest.ts), which coerces nothing; each such
 * flag stays pinned to its declared value all the same, so no library that does the same write can
 * turn it on. Query inputs that must accept strings say so in their schema (see `queryInt` in
 * @svc/schemas).
 */
import type { RouteTable } from './route-table.js';

type ZodLike = { _zod?: { def?: Record<string, unknown> } };

const COERCIBLE = new Set(['number', 'boolean', 'bigint', 'date']);

function pin(def: Record<string, unknown>): void {
  const descriptor = Object.getOwnPropertyDescriptor(def, 'coerce');
  if (descriptor && !descriptor.configurable) return; // already pinned
  const declared = def.coerce === true;
  Object.defineProperty(def, 'coerce', {
    get: () => declared,
    set: () => {},
    enumerable: true,
    configurable: false,
  });
}

function visit(schema: unknown, seen: Set<unknown>): void {
  const def = (schema as ZodLike | undefined)?._zod?.def;
  if (!def || seen.has(def)) return;
  seen.add(def);
  const type = def.type as string;
  if (COERCIBLE.has(type)) pin(def);
  const children: unknown[] = [];
  switch (type) {
    case 'object': {
      const shape = (schema as { shape?: Record<string, unknown> }).shape ?? (def.shape as Record<string, unknown>);
      children.push(...Object.values(shape ?? {}));
      if (def.catchall) children.push(def.catchall);
      break;
    }
    case 'array':
      children.push(def.element);
      break;
    case 'set':
      children.push(def.valueType);
      break;
    case 'record':
    case 'map':
      children.push(def.keyType, def.valueType);
      break;
    case 'tuple':
      children.push(...((def.items as unknown[]) ?? []), def.rest);
      break;
    case 'union':
      children.push(...((def.options as unknown[]) ?? []));
      break;
    case 'intersection':
      children.push(def.left, def.right);
      break;
    case 'pipe':
      children.push(def.in, def.out);
      break;
    case 'lazy':
      children.push((def.getter as () => unknown)());
      break;
    default:
      // optional, nullable, default, prefault, readonly, catch, nonoptional, promise
      if (def.innerType) children.push(def.innerType);
  }
  for (const child of children) visit(child, seen);
}

/** Pins coercion on every input schema of every procedure of the table. Idempotent. */
export function pinInputCoercion(table: RouteTable): void {
  const seen = new Set<unknown>();
  for (const entry of table.procedures) {
    for (const input of (entry.procedure!._def as unknown as { inputs: unknown[] }).inputs) visit(input, seen);
  }
}
