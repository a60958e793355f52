/**
 * `npm run openapi` writes openapi/openapi.json from the router; `npm run openapi:check`
 * exits 1 when the committed file differs from what the router generates.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { appRouter } from '../trpc/app-router.js';
import { buildOpenApiDocument, serialiseDocument } from './document.js';

const DEFAULT_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../openapi/openapi.json');

function main(argv: string[]): number {
  const check = argv.includes('--check');
  const fileFlag = argv.indexOf('--file');
  const file = fileFlag >= 0 && argv[fileFlag + 1] ? path.resolve(argv[fileFlag + 1]!) : DEFAULT_FILE;
  const generated = serialiseDocument(buildOpenApiDocument(appRouter));
  if (!check) {
    writeFileSync(file, generated);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
    return 0;
  }
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    console.error(`${file} is missing; run \`npm run openapi\``);
    return 1;
  }
  if (committed !== generated) {
    console.error(`${path.relative(process.cwd(), file)} is out of date with the router; run \`npm run openapi\` and commit it`);
    return 1;
  }
  console.log('openapi.json matches the router');
  return 0;
}

process.exitCode = main(process.argv.slice(2));
