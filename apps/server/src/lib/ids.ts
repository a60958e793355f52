/**
 * The one id generator. Database ids have cuid2's shape (24 characters: a lowercase letter,
 * then 23 of [0-9a-z]) and `evt_` + that for events. They are drawn straight from the
 * operating system's CSPRNG: 23 base-36 characters carry ~119 bits, so ids are unguessable
 * and never collide in practice, like cuid2's. @paralleldrive/cuid2 derives the same shape by
 * hashing time, a counter and entropy with SHA-3, which cost ~0.25 ms per id here: three per
 * checkout and one per webhook delivery made it a visible share of the CPU (bench/README.md).
 * Ids are not monotonic (order lines carry `position` for their order).
 */
import { randomFillSync } from 'node:crypto';

const ID_LENGTH = 24;
const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
/** Bytes below these limits map evenly onto 36 or 26 symbols (rejection sampling: no bias). */
const BASE36_LIMIT = 252; // 36 * 7
const LETTER_LIMIT = 234; // 26 * 9

const pool = new Uint8Array(4096);
let offset = pool.length;

function nextByte(): number {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  return pool[offset++]!;
}

export function newId(): string {
  let byte = nextByte();
  while (byte >= LETTER_LIMIT) byte = nextByte();
  let id = DIGITS[10 + (byte % 26)]!;
  while (id.length < ID_LENGTH) {
    byte = nextByte();
    if (byte < BASE36_LIMIT) id += DIGITS[byte % 36];
  }
  return id;
}

/** An event id: `evt_` and a database id. */
export function newEventId(): string {
  return `evt_${newId()}`;
}

const ID_SHAPE = /^[a-z][0-9a-z]{1,31}$/;

/** Whether a path or body value can be one of our ids (cuid2's shape), before asking the database. */
export function looksLikeId(value: string): boolean {
  return ID_SHAPE.test(value);
}
