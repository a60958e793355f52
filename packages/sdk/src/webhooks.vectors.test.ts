/**
 * verifySignature and constructEvent against the shared signature vectors
 * (test/fixtures/webhook-signature-vectors.json): headers the server's signer made, and broken
 * variants of them, each with its verdict. The server's tests check the same file against its
 * signer, so the two sides cannot drift apart unnoticed.
 */
import { describe, expect, it } from 'vitest';
import {
  loadWebhookSignatureVectors,
  type WebhookSignatureVector,
} from '../../../test/fixtures/webhook-signature-vectors.js';
import {
  constructEvent,
  SvcError,
  verifySignature,
  WebhookVerificationError,
  type VerifyOptions,
  type WebhookVerificationErrorCode,
} from './index.js';

/** Every code, so a new one fails to compile here until the vectors consider it. */
const CODES: Record<WebhookVerificationErrorCode, true> = {
  missing_header: true,
  malformed_header: true,
  timestamp_out_of_tolerance: true,
  signature_mismatch: true,
  payload_not_raw: true,
  secret_malformed: true,
  tolerance_invalid: true,
  headers_invalid: true,
};
/** A JSON vector's body is always a string and its headers an object, so these cannot occur there (webhooks.test.ts covers them). */
const NOT_EXPRESSIBLE: WebhookVerificationErrorCode[] = ['payload_not_raw', 'headers_invalid'];

const VECTORS = loadWebhookSignatureVectors();
const rows = (cases: WebhookSignatureVector[]) => cases.map((c) => [c.name, c.expect, c] as const);

function options(c: WebhookSignatureVector): VerifyOptions {
  return {
    now: new Date(c.now * 1000),
    ...(c.toleranceSeconds === undefined ? {} : { toleranceSeconds: c.toleranceSeconds }),
  };
}

async function verdict(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'valid';
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toBeInstanceOf(SvcError);
    return (error as WebhookVerificationError).code;
  }
}

describe('webhook verification against the shared vectors', () => {
  it('each case expects "valid" or a known code, and every code a vector can express is exercised', () => {
    for (const c of VECTORS) expect(['valid', ...Object.keys(CODES)], c.name).toContain(c.expect);
    const seen = new Set(VECTORS.map((c) => c.expect));
    const expressible = Object.keys(CODES).filter(
      (code) => !NOT_EXPRESSIBLE.includes(code as WebhookVerificationErrorCode),
    );
    expect([...seen].sort()).toEqual(['valid', ...expressible].sort());
    expect(new Set(VECTORS.filter((c) => c.expect === 'valid').map((c) => c.scheme))).toEqual(
      new Set(['service', 'standard']),
    );
  });

  it.each(rows(VECTORS))('%s → %s (string body, plain headers object)', async (_name, expected, c) => {
    const result = verifySignature(c.body, c.headers, c.secret, options(c));
    if (expected === 'valid') {
      await expect(result).resolves.toEqual({ scheme: c.scheme, timestamp: c.timestamp });
    } else {
      expect(await verdict(result)).toBe(expected);
    }
  });

  it.each(rows(VECTORS))('%s → %s (bytes, fetch Headers)', async (_name, expected, c) => {
    const bytes = new TextEncoder().encode(c.body);
    expect(await verdict(verifySignature(bytes, new Headers(c.headers), c.secret, options(c)))).toBe(expected);
    expect(await verdict(verifySignature(bytes.buffer, new Headers(c.headers), c.secret, options(c)))).toBe(expected);
  });

  it.each(rows(VECTORS))('%s → %s (constructEvent)', async (_name, expected, c) => {
    const result = constructEvent(c.body, c.headers, c.secret, options(c));
    if (expected === 'valid') {
      await expect(result).resolves.toEqual(JSON.parse(c.body));
    } else {
      expect(await verdict(result)).toBe(expected);
    }
  });
});
