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

/** A key's last four characters behind dots: every list of keys shows them so, never the key. */
export function maskKey(value: string): string {
  return `${'•'.repeat(Math.max(4, Math.min(value.length - 4, 16)))}${value.slice(-4)}`;
}
