/**
 * The dashboard is typed from the router (docs/architecture.md, The faces): it takes only types from the server, talks
 * to the API only through its tRPC client, and repeats nothing of the API's but what a test pins.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DELIVERY_STATUSES, LICENSE_STATUSES, ORDER_STATUSES, SUBSCRIPTION_STATUSES } from '@svc/schemas';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../apps/dashboard/src/', import.meta.url));

const files = readdirSync(SRC, { withFileTypes: true, recursive: true })
  .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
  .map((entry) => path.join(entry.parentPath, entry.name));

/** Each import declaration of a file: its module and whether it is type-only (`import type`). */
function importsOf(file: string): Array<{ module: string; typeOnly: boolean }> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Array<{ module: string; typeOnly: boolean }> = [];
  source.forEachChild((node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier))
      found.push({ module: node.moduleSpecifier.text, typeOnly: node.importClause?.isTypeOnly ?? false });
    if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      found.push({ module: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
  });
  return found;
}

describe('the dashboard code', () => {
  it('has sources to read', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it('takes only types from the server (the router), never its code', () => {
    const server = files.flatMap((file) =>
      importsOf(file)
        .filter((i) => i.module.startsWith('@svc/server') || i.module.includes('apps/server'))
        .map((i) => ({ file: path.relative(SRC, file), ...i })),
    );
    expect(server.length).toBeGreaterThan(0);
    expect(server.filter((i) => !i.typeOnly)).toEqual([]);
  });

  it('calls the API through the typed tRPC client: no hand-written fetch but the client link', () => {
    const fetching = files
      .filter((file) => /\bfetch\s*\(/.test(readFileSync(file, 'utf8')))
      .map((file) => path.relative(SRC, file));
    // api.ts hands the tRPC link its fetch (to send the session cookie).
    expect(fetching).toEqual(['api.ts']);
  });

  it("repeats the API's order, license and delivery statuses exactly (the shell keeps zod out of its first load)", () => {
    // Each list sits with the search params of the screen that filters by it.
    const listed = (name: string, file: string) =>
      new RegExp(`export const ${name} = \\[([^\\]]*)\\]`)
        .exec(readFileSync(path.join(SRC, file), 'utf8'))?.[1]
        ?.split(',')
        .map((s) => s.trim().replace(/'/g, ''))
        .filter(Boolean);
    expect(listed('ORDER_STATUSES', 'screens/orders/search.ts')).toEqual([...ORDER_STATUSES]);
    expect(listed('LICENSE_STATUSES', 'screens/licenses/search.ts')).toEqual([...LICENSE_STATUSES]);
    expect(listed('SUBSCRIPTION_STATUSES', 'screens/subscriptions/search.ts')).toEqual([...SUBSCRIPTION_STATUSES]);
    expect(listed('DELIVERY_STATUSES', 'screens/webhooks/search.ts')).toEqual([...DELIVERY_STATUSES]);
  });
});
