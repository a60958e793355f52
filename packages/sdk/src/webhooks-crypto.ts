/**
 * The bytes and WebCrypto under webhook signatures: HMAC-SHA256, a comparison whose time depends
 * on the lengths only, UTF-8, hex and strict base64. WebCrypto (`globalThis.crypto.subtle`) only,
 * no Node built-in, so the same code runs in Node (>= 20), Deno, Bun, browsers and edge runtimes.
 */

export type Bytes = Uint8Array<ArrayBuffer>;

interface WebCryptoLike {
  subtle: {
    importKey(
      format: 'raw',
      keyData: Bytes,
      algorithm: { name: 'HMAC'; hash: 'SHA-256' },
      extractable: false,
      usages: ['sign'],
    ): Promise<unknown>;
    sign(algorithm: 'HMAC', key: unknown, data: Bytes): Promise<ArrayBuffer>;
  };
  getRandomValues(array: Bytes): Bytes;
}

function webCrypto(): WebCryptoLike {
  const found = (globalThis as { crypto?: Partial<WebCryptoLike> }).crypto;
  if (found?.subtle === undefined || found.getRandomValues === undefined) {
    throw new Error(
      '@svc/sdk webhooks need WebCrypto (globalThis.crypto.subtle): Node 20 or later, Deno, Bun, a browser (in a secure context) or an edge runtime.',
    );
  }
  return found as WebCryptoLike;
}

export async function hmacSha256(key: Bytes, data: Bytes): Promise<Bytes> {
  const { subtle } = webCrypto();
  const cryptoKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await subtle.sign('HMAC', cryptoKey, data));
}

/** Compares every candidate in full, in time that depends on the lengths only. */
export function anyMatch(expected: Bytes, candidates: Bytes[]): boolean {
  let matched = 0;
  for (const candidate of candidates) matched |= timingSafeEqual(expected, candidate) ? 1 : 0;
  return matched === 1;
}

function timingSafeEqual(a: Bytes, b: Bytes): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

const encoder = new TextEncoder();

export function utf8(text: string): Bytes {
  return encoder.encode(text);
}

export function concat(head: Bytes, tail: Bytes): Bytes {
  const out = new Uint8Array(head.length + tail.length);
  out.set(head, 0);
  out.set(tail, head.length);
  return out;
}

export function toHex(bytes: Bytes): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

export function fromHex(hex: string): Bytes {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function toBase64(bytes: Bytes): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Strict base64 (standard alphabet, padded); null when it is not. */
export function fromBase64(text: string): Bytes | null {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

export function randomHex(bytes: number): string {
  return toHex(webCrypto().getRandomValues(new Uint8Array(bytes)));
}
