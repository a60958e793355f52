/**
 * The shape docs/architecture.md asks of the code, read from the sources: no import cycle between module
 * folders nor between files, modules that reach tRPC only through their routers, a lib/ beneath
 * modules/ and db/, an order's status written only by the lifecycle, and raw SQL only in a
 * module's repository (`<domain>.repo.ts`), each statement with the line that says why. Modules
 * call no other module's services (work that spans modules is a flow in flows/), every service
 * and flow takes the context first (the transaction rides on it), and each flow says which
 * transaction it runs in.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { cycles, importsOf, specifiersIn } from './support/imports.js';

const SRC = fileURLToPath(new URL('../apps/server/src/', import.meta.url));
const MODULES = path.join(SRC, 'modules');
const TRPC = path.join(SRC, 'trpc');
const API = path.join(SRC, 'api');
const FLOWS = path.join(SRC, 'flows');
const LIB = path.join(SRC, 'lib');
const DB = path.join(SRC, 'db');

/**
 * The server's layers, lowest first (docs/architecture.md says what each holds). A file may import
 * from its own layer and the layers below it, never from one above.
 */
const LAYERS: { name: string; holds: (relative: string) => boolean }[] = [
  { name: 'lib', holds: (f) => f.startsWith('lib/') },
  {
    name: 'foundation',
    holds: (f) =>
      [
        'config.ts',
        'deps.ts',
        'demo.ts',
        'node-flags.ts',
        'db/prepared.ts',
        'db/replicas.ts',
        'db/embedded.ts',
      ].includes(f) || f.startsWith('types/'),
  },
  { name: 'modules', holds: (f) => f.startsWith('modules/') },
  { name: 'db', holds: (f) => f.startsWith('db/') },
  { name: 'flows', holds: (f) => f.startsWith('flows/') },
  { name: 'trpc', holds: (f) => f.startsWith('trpc/') },
  { name: 'api', holds: (f) => f.startsWith('api/') },
  { name: 'http', holds: (f) => f.startsWith('http/') },
  { name: 'openapi', holds: (f) => f.startsWith('openapi/') },
  { name: 'entry', holds: (f) => !f.includes('/') },
];

function layerOf(file: string): number {
  const relative = path.relative(SRC, file).split(path.sep).join('/');
  const index = LAYERS.findIndex((layer) => layer.holds(relative));
  if (index < 0) throw new Error(`${relative} is in no layer`);
  return index;
}

/** Every TypeScript file under `dir`, tests included. */
function allFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** Every source file under `dir` (tests are not part of the import graph: they may compose modules). */
function sources(dir: string): string[] {
  return allFiles(dir).filter((file) => !file.endsWith('.test.ts'));
}

const isUnder = (file: string, dir: string) => !path.relative(dir, file).startsWith('..');

const moduleOf = (file: string): string | undefined => {
  const relative = path.relative(MODULES, file);
  return relative.startsWith('..') ? undefined : relative.split(path.sep)[0];
};

/** module -> the modules it imports, with one file that does (for the message). */
function moduleGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sources(MODULES)) {
    const from = moduleOf(file)!;
    const edges = graph.get(from) ?? new Map<string, string>();
    graph.set(from, edges);
    for (const target of importsOf(file)) {
      const to = moduleOf(target);
      if (to && to !== from && !edges.has(to)) edges.set(to, path.relative(SRC, file));
    }
  }
  return graph;
}

/** file -> the files it imports, over every source under src/ (relative to src/). */
function fileGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sources(SRC)) {
    graph.set(path.relative(SRC, file), new Set(importsOf(file).map((target) => path.relative(SRC, target))));
  }
  return graph;
}

describe('the import reader', () => {
  it('finds every form an import takes, and none in comments or strings', () => {
    const text = [
      "import value from './default.js';",
      "import * as all from './namespace.js';",
      "import type { OnlyType } from './type-only.js';",
      "import { type InlineType, runtime } from './inline-type.js';",
      "export { reexported } from './reexport.js';",
      "export * from './reexport-all.js';",
      "export type { ReexportedType } from './reexport-type.js';",
      'import {',
      '  first,',
      '  second,',
      "} from './multi-line.js';",
      "import './side-effect.js';",
      'import "./double-quoted.js";',
      "const lazy = await import('./dynamic.js');",
      "const later = () => import(\n  './dynamic-multi-line.js'\n);",
      "type Named = import('./type-query.js').Named;",
      "// import commented from './comment.js';",
      'const quoted = "import inString from \'./string.js\'";',
    ].join('\n');
    expect(specifiersIn(text)).toEqual([
      './default.js',
      './namespace.js',
      './type-only.js',
      './inline-type.js',
      './reexport.js',
      './reexport-all.js',
      './reexport-type.js',
      './multi-line.js',
      './side-effect.js',
      './double-quoted.js',
      './dynamic.js',
      './dynamic-multi-line.js',
      './type-query.js',
    ]);
  });

  it('resolves every relative import of the server to a file', () => {
    const unresolved = sources(SRC).flatMap((file) =>
      importsOf(file)
        .filter((target) => !existsSync(target))
        .map((target) => `${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`),
    );
    expect(unresolved).toEqual([]);
  });
});

describe('the code', () => {
  it('has no import cycle between files, type-only imports included', () => {
    // The search finds a circle, and says which files close it.
    const circle = new Map([
      ['a.ts', new Set(['b.ts'])],
      ['b.ts', new Set(['c.ts'])],
      ['c.ts', new Set(['a.ts'])],
    ]);
    expect(cycles(circle)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
    const graph = fileGraph();
    // The graph is real (a reader that found nothing would pass), and holds type-only imports.
    expect(graph.get('app.ts')?.has('deps.ts')).toBe(true);
    expect(graph.get('flows/place-order.ts')?.has('modules/orders/order-lifecycle.ts')).toBe(true);
    expect(readFileSync(path.join(SRC, 'deps.ts'), 'utf8')).toMatch(
      /^import type \{ Config \} from '\.\/config\.js';$/m,
    );
    expect(graph.get('deps.ts')?.has('config.ts')).toBe(true);
    expect(cycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('keeps tRPC, the API and the flows out of the modules', () => {
    const files = allFiles(MODULES);
    // Tests included: a service's tests build its context as a service sees it, not as tRPC does.
    expect(files.some((file) => file.endsWith('.service.test.ts'))).toBe(true);
    const above = [TRPC, API, FLOWS];
    const offenders = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => above.some((dir) => isUnder(target, dir)))
        .map((target) => `${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`),
    );
    expect(offenders).toEqual([]);
    // The routers do import tRPC's procedures (a reader that found nothing would pass).
    expect(importsOf(path.join(API, 'routers/orders.router.ts')).some((target) => isUnder(target, TRPC))).toBe(true);
  });

  it("keeps the server's layers in order: no import runs back up", () => {
    const offenders: string[] = [];
    let edges = 0;
    for (const file of sources(SRC)) {
      const from = layerOf(file);
      for (const target of importsOf(file)) {
        if (!isUnder(target, SRC)) continue;
        edges++;
        const to = layerOf(target);
        if (to > from)
          offenders.push(
            `${path.relative(SRC, file)} (${LAYERS[from]!.name}) -> ${path.relative(SRC, target)} (${LAYERS[to]!.name})`,
          );
      }
    }
    expect(offenders).toEqual([]);
    // Every layer holds files (flows/ included), and the reader saw the imports between them.
    const counts = LAYERS.map((_, i) => sources(SRC).filter((file) => layerOf(file) === i).length);
    expect(LAYERS.filter((_, i) => counts[i] === 0).map((layer) => layer.name)).toEqual([]);
    expect(edges).toBeGreaterThan(500);
    // A file no layer names fails (so a new folder has to be placed).
    expect(() => layerOf(path.join(SRC, 'nowhere/new.ts'))).toThrow(/no layer/);
  });

  it('keeps lib/ beneath the modules and the database: it imports neither', () => {
    const offenders = allFiles(LIB).flatMap((file) =>
      importsOf(file)
        .filter((target) => isUnder(target, MODULES) || isUnder(target, DB))
        .map((target) => `${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`),
    );
    expect(offenders).toEqual([]);
    // lib/ files do import one another (a reader that found nothing would pass).
    expect(importsOf(path.join(LIB, 'cursor.ts'))).toContain(path.join(LIB, 'crypto.ts'));
  });

  it('has no import cycle between module folders', () => {
    const graph = moduleGraph();
    // The graph is real: the modules import each other (a parser that found nothing would pass).
    expect(graph.get('fulfilment')?.has('orders')).toBe(true);
    expect(graph.get('payments')?.has('orders')).toBe(true);
    const described = cycles(graph).map((cycle) =>
      cycle
        .slice(1)
        .map((to, i) => `${cycle[i]} -> ${to} (${graph.get(cycle[i]!)!.get(to)})`)
        .join(', '),
    );
    expect(described).toEqual([]);
  });

  it('writes an order status only in the lifecycle', () => {
    const allowed = new Set(['modules/orders/order-lifecycle.ts', 'modules/orders/orders.repo.ts']);
    const offenders: string[] = [];
    for (const file of sources(SRC)) {
      const relative = path.relative(SRC, file);
      if (allowed.has(relative)) continue;
      const text = readFileSync(file, 'utf8');
      // An assignment to an order's status, or SQL that sets the order table's status column.
      if (/\border\.status\s*=(?!=)/.test(text) || /update\s+"order"\s+set[^;`]*\bstatus\s*=/i.test(text))
        offenders.push(relative);
    }
    expect(offenders).toEqual([]);
    // And the lifecycle does write it.
    expect(readFileSync(path.join(SRC, 'modules/orders/order-lifecycle.ts'), 'utf8')).toMatch(
      /order\.status = rule\.to/,
    );
  });

  it('runs raw SQL only in repositories, each statement with its reason above it', () => {
    const raw = /\.execute(?:<[^>(]*(?:<[^>]*>[^>(]*)*>)?\(\s*(['`])(?!(?:all|get|run)\1)/g;
    const outside: string[] = [];
    const unexplained: string[] = [];
    let repositories = 0;
    for (const file of sources(SRC)) {
      const relative = path.relative(SRC, file);
      const text = readFileSync(file, 'utf8');
      const statements = [...text.matchAll(raw)];
      if (statements.length === 0) continue;
      const isRepo =
        relative.endsWith('.repo.ts') ||
        relative === 'db/orm.ts' ||
        relative === 'db/create-migration.ts' ||
        relative.startsWith('db/migrations/');
      if (!isRepo) {
        outside.push(relative);
        continue;
      }
      repositories++;
      // Each statement: a comment on the line above it, or the doc comment of its function.
      for (const statement of statements) {
        const lines = text.slice(0, statement.index).split('\n');
        const lineAbove = lines.at(-2)?.trim() ?? '';
        const fnStart = lines.findLastIndex((line) => /^(export )?(async )?function /.test(line));
        const docAbove = fnStart > 0 && lines[fnStart - 1]!.trim().endsWith('*/');
        if (!lineAbove.startsWith('//') && !docAbove) unexplained.push(`${relative}:${lines.length}`);
      }
    }
    expect(outside).toEqual([]);
    expect(unexplained).toEqual([]);
    expect(repositories).toBeGreaterThan(10);
  });

  it('keeps the transport out of the modules: no request, reply, raw header or tRPC internal in sight', () => {
    const transport =
      /\bctx\.req\b|\bctx\.res\b|\bctx\.req\w|\bctx\.res\w|\breply\b|\brequest\.headers\b|from 'fastify'/;
    const offenders = sources(MODULES)
      .filter((file) => transport.test(readFileSync(file, 'utf8')))
      .map((file) => path.relative(SRC, file));
    expect(offenders).toEqual([]);
    const internals = [...sources(SRC), ...sources(fileURLToPath(new URL('../packages/', import.meta.url)))]
      .filter(
        (file) => !file.includes(`${path.sep}node_modules${path.sep}`) && !file.includes(`${path.sep}dist${path.sep}`),
      )
      .filter((file) => readFileSync(file, 'utf8').includes('unstable-core-do-not-import'))
      .map((file) => path.relative(SRC, file));
    expect(internals).toEqual([]);
  });

  it("decodes a client's JSON inside a field only through readJsonField, which holds it to the input limits", () => {
    // What a module may JSON.parse itself, and why that is not a client's field.
    const parsesItsOwn: Record<string, string> = {
      'modules/events/events.service.ts': 'event payloads as the outbox stored them',
      'modules/payments/test-gateway.ts': 'a signed notification, walked by http/payment-webhooks.ts',
    };
    const schemas = fileURLToPath(new URL('../packages/schemas/src/', import.meta.url));
    const parsing = [...sources(MODULES), ...sources(schemas)]
      .filter((file) => /\bJSON\.parse\b/.test(readFileSync(file, 'utf8')))
      .map((file) => path.relative(SRC, file));
    expect(parsing.filter((file) => !(file in parsesItsOwn))).toEqual([]);
    expect(readFileSync(path.join(MODULES, 'catalog/cart.service.ts'), 'utf8')).toContain("readJsonField('cart'");
  });
});

/** An exported function of a source: its name, its first parameter as written, its doc comment. */
interface ExportedFunction {
  name: string;
  param: { name: string; type: string } | undefined;
  doc: string;
  isAsync: boolean;
}

/** The exported functions of a file (declarations and `export const f = (...) =>`), read by TypeScript's parser. */
function exportedFunctions(file: string): ExportedFunction[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: ExportedFunction[] = [];
  const add = (name: string, fn: ts.SignatureDeclaration, statement: ts.Statement) => {
    const first = fn.parameters[0];
    const docs = ts.getJSDocCommentsAndTags(statement).map((doc) => doc.getText());
    found.push({
      name,
      param: first && { name: first.name.getText(), type: first.type?.getText() ?? '' },
      doc: docs.join('\n'),
      isAsync: ts.canHaveModifiers(fn) && !!ts.getModifiers(fn)?.some((m) => m.kind === ts.SyntaxKind.AsyncKeyword),
    });
  };
  for (const statement of source.statements) {
    if (!ts.getModifiers(statement as ts.HasModifiers)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    if (ts.isFunctionDeclaration(statement) && statement.name) add(statement.name.text, statement, statement);
    if (ts.isVariableStatement(statement))
      for (const declaration of statement.declarationList.declarations) {
        const init = declaration.initializer;
        if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)))
          add(declaration.name.getText(), init, statement);
      }
  }
  return found;
}

/**
 * The exported functions of modules/ and flows/ that may take something other than the context
 * first, each with its reason (docs/architecture.md, "The context and the transaction").
 */
const TAKES_NO_CONTEXT: Record<string, string> = {
  'modules/request/context.ts serviceContext': "it makes the context, from the application's deps (jobs, the CLI)",
  'modules/events/wake.ts wakeHubOf':
    "the outbox's wake-up hub hangs on the ORM behind an EntityManager; recordEvent reads it for the context's",
  'modules/events/wake.ts wakeHubFor': 'the hub is per ORM (one per process), made when the app is built',
  'modules/events/wake.ts notifyDispatchers':
    "wakes this process's dispatchers once attempts are queued (replays, resends); the hub is the ORM's",
  'modules/mail/wake.ts mailWakeHubFor': "the mail senders' hub, per ORM as the outbox's is",
  'modules/mail/wake.ts wakeMailSendersAfterCommit':
    "an after-commit hook on the EntityManager's own transaction; recordMail sets it for the context's",
};

describe('the flows and the context', () => {
  it("lets no module import another module's services (work that spans modules is a flow)", () => {
    const offenders = sources(MODULES).flatMap((file) =>
      importsOf(file)
        .filter((target) => target.endsWith('.service.ts') && moduleOf(target) && moduleOf(target) !== moduleOf(file))
        .map((target) => `${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`),
    );
    expect(offenders).toEqual([]);
    // The flows do import services (a reader that found nothing would pass).
    expect(importsOf(path.join(FLOWS, 'settle-payment.ts'))).toContain(
      path.join(MODULES, 'fulfilment/fulfilment.service.ts'),
    );
  });

  it('gives every exported function of a module and a flow the context first, never an EntityManager, the ORM or AppDeps', () => {
    const layerFiles = [...sources(MODULES), ...sources(FLOWS)].filter(
      (file) => !file.endsWith('.repo.ts') && !file.endsWith('.entities.ts'),
    );
    const offenders: string[] = [];
    const excused = new Set<string>();
    let withContext = 0;
    for (const file of layerFiles) {
      for (const fn of exportedFunctions(file)) {
        const key = `${path.relative(SRC, file)} ${fn.name}`;
        const param = fn.param;
        if (param?.name === 'ctx') withContext++;
        const bare =
          !!param &&
          (/\b(EntityManager|AppDeps|Orm)\b/.test(param.type) || ['em', 'tx', 'deps', 'orm'].includes(param.name));
        if (!bare) continue;
        if (key in TAKES_NO_CONTEXT) excused.add(key);
        else offenders.push(`${key}(${param.name}: ${param.type})`);
      }
    }
    expect(offenders).toEqual([]);
    // Every exception is still real (a stale one would excuse a newcomer), and the reader saw the services.
    expect([...excused].sort()).toEqual(Object.keys(TAKES_NO_CONTEXT).sort());
    expect(withContext).toBeGreaterThan(150);
    // The parser reads what the rule needs: a function whose first parameter is an EntityManager is seen as one.
    const probe = exportedFunctions(path.join(MODULES, 'orders/orders.repo.ts')).find(
      (fn) => fn.name === 'insertNewOrder',
    );
    expect(probe?.param).toEqual({ name: 'em', type: 'EntityManager' });
  });

  it('has each exported flow say in its doc comment which transaction it runs in', () => {
    const flows = sources(FLOWS).flatMap((file) =>
      exportedFunctions(file)
        .filter((fn) => fn.isAsync)
        .map((fn) => ({ key: `${path.relative(SRC, file)} ${fn.name}`, doc: fn.doc })),
    );
    expect(flows.length).toBeGreaterThan(10);
    expect(flows.filter((flow) => !/\btransactions?\b/i.test(flow.doc)).map((flow) => flow.key)).toEqual([]);
  });

  it("runs the flows the routers call for placing an order, settling, the seller's actions and restock", () => {
    const routers = path.join(API, 'routers');
    expect(importsOf(path.join(routers, 'checkout.router.ts'))).toContain(path.join(FLOWS, 'place-order.ts'));
    expect(importsOf(path.join(routers, 'orders.router.ts'))).toContain(path.join(FLOWS, 'seller-order-actions.ts'));
    expect(importsOf(path.join(routers, 'catalog.router.ts'))).toContain(path.join(FLOWS, 'restock.ts'));
    // The orchestration that sat in modules is gone from them.
    const gone = new Set(['checkout', 'order-actions']);
    expect(sources(MODULES).filter((file) => gone.has(moduleOf(file)!))).toEqual([]);
  });
});
