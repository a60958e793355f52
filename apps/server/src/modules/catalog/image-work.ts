/**
 * How the catalog decodes pictures (product images, the store logo): `sharp`, loaded on the first
 * upload and set up for a server that must stay small, behind a queue.
 *
 * - At most IMAGE_JOBS pictures are decoded at once in a process; up to IMAGE_QUEUE more wait
 *   their turn, and past that an upload is refused with 503 (`service_unavailable`) before any of
 *   its pixels are decoded. Without the queue, 32 uploads in parallel each decoded at once: a
 *   production server (512 MiB heap flag) went from 183 to 729 MB RSS (issue 37, outside probe).
 * - No input of more than MAX_INPUT_PIXELS is decoded: the header says how large a picture is,
 *   and a small file that would decode into a huge bitmap is refused on that alone (413).
 * - libvips keeps no operation cache (`sharp.cache(false)`: an upload is decoded once, so a cache
 *   only holds memory) and works on one thread per job (`sharp.concurrency(1)`: the queue is
 *   the parallelism; every libvips thread keeps its own buffers).
 * bench/image-memory.mjs measures it; docs/decisions.md has the figures.
 */
import type { Sharp } from 'sharp';
import { AppError } from '../../lib/errors.js';

/**
 * The most pixels a picture may have: 4096 × 4096 (16.8 million). The largest rendition is 960 px
 * wide and a logo 512 px, so 4096 px leaves more than four times the detail any of them shows; a
 * 2 MB JPEG from a camera or a phone (about 12 million pixels) fits. Decoded as RGBA it is at most
 * 64 MiB, and libvips streams most of it (it never holds the whole bitmap when it shrinks a PNG or
 * a JPEG row by row).
 */
export const MAX_INPUT_PIXELS = 4096 * 4096;
/** Pictures decoded at once in a process: two keep both cores busy and bound the memory they take. */
export const IMAGE_JOBS = 2;
/** Uploads that may wait for a turn: the rest are refused (503) instead of holding their bytes in memory. */
export const IMAGE_QUEUE = 48;

export type SharpFactory = (typeof import('sharp'))['default'];
let loaded: Promise<SharpFactory> | undefined;

/** sharp, loaded on the first upload (the native library costs every process start, the CLI's too, otherwise). */
function sharpLibrary(): Promise<SharpFactory> {
  loaded ??= import('sharp').then(({ default: sharp }) => {
    sharp.cache(false);
    sharp.concurrency(1);
    return sharp;
  });
  return loaded;
}

let running = 0;
const waiting: Array<() => void> = [];

/** Jobs running and waiting now (for the benchmark's and the tests' figures). */
export function imageWork(): { running: number; waiting: number } {
  return { running, waiting: waiting.length };
}

/**
 * Runs `work` when one of the IMAGE_JOBS turns is free, waiting for it in order; 503 when
 * IMAGE_QUEUE uploads are waiting already. `work` gets the `sharp` factory.
 */
export async function withImageTurn<T>(work: (sharp: SharpFactory) => Promise<T>): Promise<T> {
  if (running < IMAGE_JOBS) running += 1;
  else {
    if (waiting.length >= IMAGE_QUEUE)
      throw new AppError('service_unavailable', 'Too many images are being processed; try again in a moment.');
    // The turn is handed over by the job that ends (below): `running` stays as it is.
    await new Promise<void>((resolve) => waiting.push(resolve));
  }
  try {
    return await work(await sharpLibrary());
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

/** Decoding options for every picture: the pixel cap (sharp's default `failOn: 'warning'` refuses one cut short or corrupt). */
export const DECODE = { limitInputPixels: MAX_INPUT_PIXELS } as const;

export interface PictureSize {
  /** As stored. */
  width: number;
  height: number;
  /** As shown: EXIF orientations 5 to 8 turn the picture a quarter, so its shown width is the stored height. */
  shownWidth: number;
  shownHeight: number;
}

/**
 * The picture's size from its header, without decoding its pixels: 415 when it has none (not a
 * picture sharp reads), 413 past MAX_INPUT_PIXELS. `what` names it in the messages ("An image").
 */
export async function pictureSize(sharp: SharpFactory, input: Buffer, what: string): Promise<PictureSize> {
  let meta: Awaited<ReturnType<Sharp['metadata']>>;
  try {
    // The header only (nothing is decoded here), so no pixel limit: the check below says how large.
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch {
    throw unreadable(what);
  }
  const { width, height } = meta;
  if (!width || !height) throw unreadable(what);
  if (width * height > MAX_INPUT_PIXELS)
    throw new AppError(
      'payload_too_large',
      `${what} may have at most ${MAX_INPUT_PIXELS} pixels (4096 × 4096); this one is ${width} × ${height}.`,
    );
  const turned = (meta.orientation ?? 1) >= 5;
  return { width, height, shownWidth: turned ? height : width, shownHeight: turned ? width : height };
}

/** 415 for a picture that cannot be decoded (not one, cut short, corrupt). */
export function unreadable(what: string): AppError {
  return new AppError('unsupported_media_type', `${what} could not be read: send a whole PNG, JPEG or WebP.`);
}
