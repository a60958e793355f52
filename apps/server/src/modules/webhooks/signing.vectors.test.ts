/**
 * The signer against the shared signature vectors (test/fixtures/webhook-signature-vectors.json),
 * which the SDK's verifier is tested against too: a change to how the server signs fails
 * here until the vectors are regenerated, and then the SDK's side says whether it still
 * verifies what the server sends.
 */
import { describe, expect, it } from 'vitest';
import {
  loadWebhookSignatureVectors,
  type WebhookSignatureVector,
} from '../../../../../test/fixtures/webhook-signature-vectors.js';
import { newWebhookSecret, serviceSignature, signatureHeaders, standardSignature } from './signing.js';

const VECTORS = loadWebhookSignatureVectors();
const VALID = VECTORS.filter((c) => c.expect === 'valid');
const AS_SENT = VECTORS.filter((c) => c.asSent);
const DEFAULT_TOLERANCE_SECONDS = 300;

/** Secrets as newWebhookSecret() makes them: whsec_ + base64 of 32 bytes. */
const SECRET_SHAPE = /^whsec_[A-Za-z0-9+/]{43}=$/;

function delivery(c: WebhookSignatureVector) {
  return { eventId: c.eventId, event: c.event, deliveryId: c.deliveryId, timestamp: c.timestamp, body: c.body };
}

/** What the server sends for the case's delivery, one signature per signing secret in each scheme. */
function serverHeaders(c: WebhookSignatureVector): Record<string, string> {
  const [first, ...others] = c.signedWith;
  if (first === undefined) throw new Error(`${c.name}: signedWith is empty`);
  const headers = signatureHeaders(first, delivery(c));
  if (others.length === 0) return headers;
  const prefix = `t=${c.timestamp},`;
  return {
    ...headers,
    'x-service-signature':
      prefix + c.signedWith.map((s) => serviceSignature(s, c.timestamp, c.body).slice(prefix.length)).join(','),
    'webhook-signature': c.signedWith.map((s) => standardSignature(s, c.eventId, c.timestamp, c.body)).join(' '),
  };
}

function header(c: WebhookSignatureVector, name: string): string | undefined {
  return Object.entries(c.headers).find(([key]) => key.toLowerCase() === name)?.[1];
}

/** Whether the header the verifier checks (ours when present) carries the server's signature with c.secret over c.body. */
function carriesServerSignature(c: WebhookSignatureVector): boolean {
  const service = header(c, 'x-service-signature');
  if (service !== undefined) {
    const parts = service.split(',').map((part) => part.trim());
    const t = parts.find((part) => part.startsWith('t='))?.slice(2);
    if (t === undefined) return false;
    const [, expected] = serviceSignature(c.secret, Number(t), c.body).split(',');
    return parts.includes(expected!);
  }
  const id = header(c, 'webhook-id');
  const timestamp = header(c, 'webhook-timestamp');
  const signatures = header(c, 'webhook-signature');
  if (id === undefined || timestamp === undefined || signatures === undefined) return false;
  return signatures.split(' ').includes(standardSignature(c.secret, id, Number(timestamp), c.body));
}

describe('webhook signing against the shared vectors', () => {
  it('has valid cases of both schemes, and secrets shaped as the server makes them', () => {
    expect(new Set(VALID.map((c) => c.scheme))).toEqual(new Set(['service', 'standard']));
    expect(newWebhookSecret()).toMatch(SECRET_SHAPE);
    for (const c of VECTORS) for (const s of c.signedWith) expect(s, c.name).toMatch(SECRET_SHAPE);
  });

  it.each(AS_SENT.map((c) => [c.name, c] as const))(
    '%s: signatureHeaders() gives these headers, in this order, byte for byte',
    (_name, c) => {
      expect(c.signedWith).toHaveLength(1);
      expect(Object.entries(c.headers)).toEqual(Object.entries(signatureHeaders(c.signedWith[0]!, delivery(c))));
    },
  );

  it.each(VALID.map((c) => [c.name, c] as const))(
    '%s: every signature header is the one the server makes',
    (_name, c) => {
      const expected = serverHeaders(c);
      const checked =
        c.scheme === 'service' ? ['x-service-signature'] : ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
      for (const name of checked) expect(header(c, name), `${name} present`).toBeDefined();
      for (const [name, value] of Object.entries(c.headers)) {
        const lower = name.toLowerCase();
        // Signatures of other versions (v1a, v2) may sit beside ours; the v1 ones must be the server's.
        const ours =
          lower === 'webhook-signature'
            ? value
                .split(' ')
                .filter((entry) => entry.startsWith('v1,'))
                .join(' ')
            : value;
        expect(ours, name).toBe(expected[lower]);
      }
      // serviceSignature() / standardSignature() of each signing secret is in the checked header.
      const signatures = header(c, c.scheme === 'service' ? 'x-service-signature' : 'webhook-signature');
      for (const s of c.signedWith) {
        expect(signatures).toContain(
          c.scheme === 'service'
            ? serviceSignature(s, c.timestamp, c.body).split(',')[1]
            : standardSignature(s, c.eventId, c.timestamp, c.body),
        );
      }
    },
  );

  it.each(
    VECTORS.filter((c) => ['valid', 'signature_mismatch', 'timestamp_out_of_tolerance'].includes(c.expect)).map(
      (c) => [c.name, c.expect, c] as const,
    ),
  )(
    '%s: the server signature with the receiver secret is there exactly when the verdict is not a mismatch (%s)',
    (_name, verdict, c) => {
      expect(carriesServerSignature(c)).toBe(verdict !== 'signature_mismatch');
      if (verdict !== 'signature_mismatch') {
        const age = c.now - c.timestamp;
        expect(Math.abs(age) > (c.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)).toBe(
          verdict === 'timestamp_out_of_tolerance',
        );
      }
    },
  );
});
