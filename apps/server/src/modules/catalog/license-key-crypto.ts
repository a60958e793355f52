/**
 * The crypto of license-key values: a key is stored sealed (AEAD under `license-key-enc`) beside
 * an HMAC of its value (`license-key-hash`) that finds and deduplicates keys without opening any;
 * every list shows a key masked, never whole.
 */
import type { Config } from '../../config.js';
import { deriveKey, hmacHex, seal, unseal } from '../../lib/crypto.js';

function keyCipher(config: Config) {
  return {
    enc: deriveKey(config.encryptionKey, 'license-key-enc'),
    hash: deriveKey(config.encryptionKey, 'license-key-hash'),
  };
}

/** Seals and hashes values under one derivation of the keys (an import seals thousands). */
export function keySealer(config: Config): { hash(value: string): string; seal(value: string): string } {
  const cipher = keyCipher(config);
  return { hash: (value) => hmacHex(cipher.hash, value), seal: (value) => seal(cipher.enc, value) };
}

export function licenseKeyHash(config: Config, value: string): string {
  return hmacHex(keyCipher(config).hash, value);
}

export function decryptLicenseKey(config: Config, sealed: string): string {
  return unseal(keyCipher(config).enc, sealed);
}

/** Always these eight dots, whatever the key's length: a mask must not tell the length. */
const KEY_MASK = '••••••••';
/** Keys this short show nothing: four characters of eight are half the key. */
const KEY_MASK_SHORT = 8;

/**
 * A key as every list of keys and every license view shows it, never the key: eight dots, then its
 * last four characters when it has more than eight (issue 26: `Q` showed `••••Q`, and the dots
 * counted the length of longer keys). Characters are code points, so no pair is split.
 */
export function maskKey(value: string): string {
  const characters = Array.from(value);
  return characters.length <= KEY_MASK_SHORT ? KEY_MASK : `${KEY_MASK}${characters.slice(-4).join('')}`;
}
