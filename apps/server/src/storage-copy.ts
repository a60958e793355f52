/**
 * `svc storage copy --to <STORAGE_URL>`: copies the uploaded files of an install on local disk
 * (FILE_STORAGE_DIR, under DATA_DIR) into an object store, before the operator sets STORAGE_URL
 * (docs/deploy.md). Idempotent and resumable: an object the store already holds with the local
 * file's SHA-256 is left as it is, so a second run (or one after an interruption) copies only what
 * is missing. Every object is read back and its SHA-256 compared with the local file's; an object
 * that differs is named, left as it is for the operator to look at, and the run fails.
 */
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ExplainedFailure } from './lib/failures.js';
import type { S3FileStorage } from './lib/s3-storage.js';
import { checkedKey, meteredUpload, type StoredObject } from './lib/storage.js';

export interface CopyReport {
  /** Local files that are storage keys (a `.part` of an upload cut short is none). */
  files: number;
  copied: number;
  /** Already in the store with the same bytes. */
  present: number;
  /** In the store with other bytes, or not read back whole after the copy. */
  mismatched: string[];
}

const COPIES_AT_ONCE = 8;

/** Every file under `root` whose relative path is a storage key, sorted (one order for every run). */
async function localKeys(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    },
  );
  const keys: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const key = path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    try {
      keys.push(checkedKey(key));
    } catch {
      // Not a stored file (a partial upload's `.part`): nothing to copy.
    }
  }
  return keys.sort();
}

async function localHash(file: string): Promise<StoredObject> {
  const { meter, stored } = meteredUpload(Number.MAX_SAFE_INTEGER);
  await pipeline(createReadStream(file), meter, new Writable({ write: (_chunk, _encoding, done) => done() }));
  return stored();
}

/** Copies the files under `root` into `target`; `say` gets a progress line now and then and each mismatch. */
export async function copyToObjectStore(
  root: string,
  target: S3FileStorage,
  say: (line: string) => void,
): Promise<CopyReport> {
  const keys = await localKeys(root);
  const report: CopyReport = { files: keys.length, copied: 0, present: 0, mismatched: [] };
  say(`${keys.length} files under ${root}`);
  let next = 0;
  let done = 0;
  const copyOne = async (key: string) => {
    const file = path.join(root, key);
    const local = await localHash(file);
    const held = await target.held(key);
    if (held === undefined) {
      await target.write(key, createReadStream(file), Number.MAX_SAFE_INTEGER);
      const copied = await target.held(key);
      if (copied?.sha256 === local.sha256 && copied.size === local.size) report.copied++;
      else {
        report.mismatched.push(key);
        say(`mismatch: ${key} was copied but the store gives back other bytes`);
      }
    } else if (held.sha256 === local.sha256 && held.size === local.size) {
      report.present++;
    } else {
      report.mismatched.push(key);
      say(
        `mismatch: ${key} is already in the store with other bytes (${held.size} bytes, sha256 ${held.sha256}; local ${local.size} bytes, sha256 ${local.sha256}); left as it is`,
      );
    }
    done++;
    if (done % 100 === 0 || done === keys.length)
      say(`${done}/${keys.length}: ${report.copied} copied, ${report.present} already there`);
  };
  // A few at once: each object is a round trip or three, and the store answers them side by side.
  const copier = async () => {
    while (next < keys.length) await copyOne(keys[next++]!);
  };
  await Promise.all(Array.from({ length: COPIES_AT_ONCE }, copier));
  report.mismatched.sort();
  return report;
}

/** The command's last line, or its failure when an object differs. */
export function copyOutcome(report: CopyReport): string {
  const summary = `${report.files} files: ${report.copied} copied, ${report.present} already there, all verified`;
  if (report.mismatched.length === 0) return summary;
  throw new ExplainedFailure(
    `${report.mismatched.length} of ${report.files} objects in the store differ from the local files: ${report.mismatched.join(', ')}`,
  );
}
