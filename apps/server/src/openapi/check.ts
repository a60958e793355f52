/** Drift check between the committed openapi.json and what a router generates. */
import { readFileSync } from 'node:fs';
import type { AnyRouter } from '@trpc/server';
import { buildOpenApiDocument, serialiseDocument } from './document.js';

export type DriftResult = { ok: true } | { ok: false; reason: 'missing' | 'drift' };

export function checkDocument(router: AnyRouter, file: string): DriftResult {
  let committed: string;
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    return { ok: false, reason: 'missing' };
  }
  return committed === serialiseDocument(buildOpenApiDocument(router)) ? { ok: true } : { ok: false, reason: 'drift' };
}
