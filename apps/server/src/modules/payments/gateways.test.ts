/**
 * Which gateway takes an order of which mode (docs/architecture.md, Test mode): the test gateway never settles a live
 * order in production; a test order takes no real gateway: the test gateway, Stripe with a test key,
 * or manual (no gateway: the seller's confirmation in test mode).
 */
import { describe, expect, it } from 'vitest';
import { gatewayRefusal } from './gateways.js';
import { testGatewaySettles } from './test-gateway-rule.js';

const production = { isProduction: true, testGatewaySecret: undefined, stripeSecretKey: 'sk_live_abc' };
const development = { isProduction: false, testGatewaySecret: 'secret', stripeSecretKey: 'sk_test_abc' };

describe('testGatewaySettles', () => {
  it('settles test orders only in production, with or without the secret', () => {
    expect(testGatewaySettles(production, false)).toBe(true);
    expect(testGatewaySettles(production, true)).toBe(false);
    expect(testGatewaySettles({ ...production, testGatewaySecret: 's' }, true)).toBe(false);
  });
  it('settles any order outside production with its secret, none without', () => {
    expect(testGatewaySettles(development, true)).toBe(true);
    expect(testGatewaySettles(development, false)).toBe(true);
    expect(testGatewaySettles({ ...development, testGatewaySecret: undefined }, false)).toBe(false);
  });
});

describe('gatewayRefusal', () => {
  it('keeps live orders on real gateways in production', () => {
    expect(gatewayRefusal(production, 'manual', true)).toBeUndefined();
    expect(gatewayRefusal(production, 'stripe', true)).toBeUndefined();
    expect(gatewayRefusal(production, 'test', true)).toBe('The test gateway settles test orders only.');
  });
  it('pays a test order with the test gateway, and with Stripe only on a test key', () => {
    expect(gatewayRefusal(production, 'test', false)).toBeUndefined();
    // Manual is no gateway: the seller confirms a test order in test mode; nothing is charged.
    expect(gatewayRefusal(production, 'manual', false)).toBeUndefined();
    expect(gatewayRefusal(production, 'stripe', false)).toMatch(/test key, sk_test_/);
    expect(gatewayRefusal({ ...production, stripeSecretKey: 'sk_test_abc' }, 'stripe', false)).toBeUndefined();
    expect(gatewayRefusal({ ...production, stripeSecretKey: undefined }, 'stripe', false)).toBe(
      'Stripe is not configured.',
    );
  });
  it('leaves development as it was for live orders', () => {
    expect(gatewayRefusal(development, 'test', true)).toBeUndefined();
    expect(gatewayRefusal({ ...development, testGatewaySecret: undefined }, 'test', true)).toBe(
      'The test gateway is not available here.',
    );
  });
});
