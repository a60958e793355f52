#!/usr/bin/env node
/**
 * Writes src/generated/api.ts: every procedure the SDK may call (merchant API keys, public theme
 * routes, customer sessions; not the seller dashboard), with its kind and its input and output
 * types printed out in full from the server's router. The SDK's declaration files are built
 * from that file, so a consumer gets the router's exact types without the server, MikroORM or
 * Fastify in its tree. Runs before every SDK build; `--check` fails when the file is stale.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));
const sdkRoot = join(here, '..');
const repoRoot = join(sdkRoot, '..', '..');
const entry = join(here, 'router-entry.ts');
const outFile = join(sdkRoot, 'src', 'generated', 'api.ts');

/**
 * Which procedures, and their kinds, come from the built server's route table: the merchant API
 * (Bearer keys), the storefront and buyer routes, and the customer area; not the dashboard
 * (seller sessions) nor the sellers' sign-in. The table gives each route the policy its path
 * enforces, so a procedure both audiences call (storeAccess) is here by its merchant route (a
 * key's) and left out by its dashboard route (a session's).
 */
const { appRouter } = await import(pathToFileURL(join(repoRoot, 'apps/server/dist/api/app-router.js')).href);
const { routeTable } = await import(pathToFileURL(join(repoRoot, 'apps/server/dist/api/route-table.js')).href);
const SDK_SURFACES = new Set(['apiKey', 'buyer', 'customer']);
const procedures = routeTable(appRouter)
  .procedures.filter(
    ({ policy }) =>
      SDK_SURFACES.has(policy.auth.kind) || (policy.auth.kind === 'public' && policy.auth.audience === 'storefront'),
  )
  .map(({ name, type, policy }) => ({ path: name, type, idempotent: policy.idempotency !== undefined }))
  .sort((a, b) => a.path.localeCompare(b.path));

const configPath = join(repoRoot, 'apps/server/tsconfig.json');
const parsed = ts.parseJsonConfigFileContent(
  ts.readConfigFile(configPath, ts.sys.readFile).config,
  ts.sys,
  dirname(configPath),
);
// The whole server program, so its module augmentations (app.ts) apply; rootDir does not.
const program = ts.createProgram([entry, ...parsed.fileNames], {
  ...parsed.options,
  rootDir: undefined,
  noEmit: true,
  declaration: false,
  sourceMap: false,
});
const diagnostics = ts.getPreEmitDiagnostics(program).filter((d) => d.category === ts.DiagnosticCategory.Error);
if (diagnostics.length > 0) {
  process.stderr.write(
    ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (f) => f,
      getCurrentDirectory: () => repoRoot,
      getNewLine: () => '\n',
    }),
  );
  process.exit(1);
}
const checker = program.getTypeChecker();
const source = program.getSourceFile(entry);
const declared = new Map();
for (const statement of source.statements) {
  if (ts.isVariableStatement(statement)) {
    for (const decl of statement.declarationList.declarations)
      declared.set(decl.name.getText(source), checker.getTypeAtLocation(decl));
  }
}

/** The type at `a.b` of a router-shaped object type. */
function typeAtPath(root, path) {
  let type = root;
  for (const part of path.split('.')) {
    const symbol = checker.getPropertyOfType(type, part);
    if (!symbol) throw new Error(`no type for ${path}`);
    type = checker.getTypeOfSymbol(symbol);
  }
  return type;
}

const F = ts.TypeFlags;
const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Prints a JSON-shaped type structurally, so nothing refers back to a server declaration. */
function print(type, indent, seen, optional = false) {
  if (type.flags & (F.Any | F.Unknown)) return 'unknown';
  if (type.flags & F.String) return 'string';
  if (type.flags & F.Number) return 'number';
  if (type.flags & F.Boolean) return 'boolean';
  if (type.flags & F.BigInt) return 'bigint';
  if (type.flags & F.Null) return 'null';
  if (type.flags & F.Undefined) return 'undefined';
  if (type.flags & F.Void) return 'void';
  if (type.flags & F.Never) return 'never';
  if (type.flags & F.StringLiteral) return JSON.stringify(type.value);
  if (type.flags & F.NumberLiteral) return String(type.value);
  if (type.flags & F.BooleanLiteral) return checker.typeToString(type);
  if (type.flags & F.TemplateLiteral) return checker.typeToString(type);
  if (type.isUnion()) {
    const members = optional ? type.types.filter((t) => !(t.flags & F.Undefined)) : type.types;
    if (members.length === 1) return print(members[0], indent, seen);
    const parts = members.map((t) => print(t, indent, seen));
    // `boolean` arrives as `true | false`.
    const unique = [...new Set(parts)];
    if (unique.includes('true') && unique.includes('false'))
      (unique.splice(unique.indexOf('true'), 1, 'boolean'), unique.splice(unique.indexOf('false'), 1));
    return unique.map((p) => (p.includes('=>') ? `(${p})` : p)).join(' | ');
  }
  if (seen.includes(type)) return 'unknown';
  const next = [...seen, type];
  if (checker.isArrayType(type)) {
    const [element] = checker.getTypeArguments(type);
    const inner = print(element, indent, next);
    return /^[\w"]+$/.test(inner) ? `${inner}[]` : `Array<${inner}>`;
  }
  if (checker.isTupleType(type)) {
    return `[${checker
      .getTypeArguments(type)
      .map((t) => print(t, indent, next))
      .join(', ')}]`;
  }
  if (
    type.isIntersection() &&
    type.types.some((t) => t.flags & (F.String | F.Number | F.Boolean | F.StringLiteral | F.NumberLiteral))
  ) {
    // Branded primitives: the primitive is what travels.
    return print(
      type.types.find((t) => t.flags & (F.String | F.Number | F.Boolean | F.StringLiteral | F.NumberLiteral)),
      indent,
      next,
    );
  }
  if (type.flags & F.Object || type.isIntersection()) {
    const symbol = type.getSymbol();
    if (symbol && symbol.getName() === 'Date') return 'Date';
    const pad = '  '.repeat(indent + 1);
    const lines = [];
    for (const info of checker.getIndexInfosOfType(type)) {
      lines.push(`${pad}[key: ${checker.typeToString(info.keyType)}]: ${print(info.type, indent + 1, next)};`);
    }
    for (const property of checker.getPropertiesOfType(type)) {
      const name = property.getName();
      const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
      const key = identifier.test(name) ? name : JSON.stringify(name);
      lines.push(
        `${pad}${key}${optional ? '?' : ''}: ${print(checker.getTypeOfSymbol(property), indent + 1, next, optional)};`,
      );
    }
    if (checker.getSignaturesOfType(type, ts.SignatureKind.Call).length > 0) return 'unknown';
    if (lines.length === 0) return type.flags & F.Object ? 'Record<string, never>' : 'unknown';
    return `{\n${lines.join('\n')}\n${'  '.repeat(indent)}}`;
  }
  return checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation);
}

const entries = procedures.map(({ path, type }) => {
  const input = print(typeAtPath(declared.get('inputs'), path), 2, []);
  // An empty answer (204) infers as never: callers see void.
  const output = print(typeAtPath(declared.get('outputs'), path), 2, []).replace(/^never$/, 'void');
  const lines = [
    `  ${JSON.stringify(path)}: {`,
    `    type: ${JSON.stringify(type)};`,
    `    input: ${input};`,
    `    output: ${output};`,
    '  };',
  ];
  return lines.join('\n');
});

const text = `// Generated by scripts/generate-api-types.mjs from the server's router. Do not edit.
/* eslint-disable */

/** Every procedure the SDK calls on \`/trpc\`: its kind, its input and its output (JSON as it travels). */
export interface ApiProcedures {
${entries.join('\n')}
}

/** The paths of the procedures that create an order and accept an \`Idempotency-Key\`. */
export const IDEMPOTENT_PROCEDURES = ${JSON.stringify(procedures.filter((p) => p.idempotent).map((p) => p.path))} as const;
`;

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(outFile, 'utf8');
  } catch {}
  if (current !== text) {
    process.stderr.write(`${outFile} is stale: run the SDK build\n`);
    process.exit(1);
  }
} else {
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, text);
  process.stdout.write(`wrote ${procedures.length} procedures to ${outFile}\n`);
}
