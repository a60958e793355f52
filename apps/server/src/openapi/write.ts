/**
 * `npm run openapi` writes openapi/openapi.json from the router; `npm run openapi:check`
 * exits 1 when the committed file differs from what the router generates.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { appRouter } from '../api/app-router.js';
import { checkDocument } from './check.js';
import { buildOpenApiDocument, serialiseDocument } from './document.js';

const DEFAULT_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../openapi/openapi.json');

function main(argv: string[]): number {
  const fileFlag = argv.indexOf('--file');
  const file = fileFlag >= 0 && argv[fileFlag + 1] ? path.resolve(argv[fileFlag + 1]!) : DEFAULT_FILE;
  const shown = path.relative(process.cwd(), file);
  if (!argv.includes('--check')) {
    writeFileSync(file, serialiseDocument(buildOpenApiDocument(appRouter)));
    console.log(`wrote ${shown}`);
    return 0;
  }
  const result = checkDocument(appRouter, file);
  if (result.ok) {
    console.log(`${shown} matches the router`);
    return 0;
  }
  console.error(
    result.reason === 'missing'
      ? `${shown} is missing; run \`npm run openapi\``
      : `${shown} is out of date with the router; run \`npm run openapi\` and commit it`,
  );
  return 1;
}

process.exitCode = main(process.argv.slice(2));
