/**
 * Which orders the `test` gateway may settle, in this process (docs/architecture.md, Test mode), read by checkout, the
 * pay page and inbound notifications alike (flows/settle-payment.ts). A file of its own, apart from
 * the test gateway's signing (test-gateway.ts).
 */
import type { Config } from '../../config.js';

/**
 * Whether the test gateway may settle an order of this mode here (docs/architecture.md, Test mode). In production:
 * test orders only, always (the pay page needs no secret: the checkout token opens the order;
 * signed notifications need TEST_GATEWAY_SECRET), and never a live order. Outside production: any
 * order (development and the test suite settle live orders with it), with its secret, which is
 * always there outside production: config.ts makes one per data directory when none is set.
 */
export function testGatewaySettles(config: Pick<Config, 'isProduction' | 'testGatewaySecret'>, livemode: boolean) {
  return config.isProduction ? !livemode : !!config.testGatewaySecret;
}

/** Where the test gateway's pay page is served: in production (for test orders), elsewhere with its secret (config.ts has one there). */
export const testPayPageEnabled = (config: Pick<Config, 'isProduction' | 'testGatewaySecret'>) =>
  config.isProduction || !!config.testGatewaySecret;
