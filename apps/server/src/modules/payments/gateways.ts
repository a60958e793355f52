/**
 * Payment gateways behind one interface: start a payment for a pending order. Each
 * answers where the buyer goes next (a redirect) or what to do (instructions). Inbound
 * notifications and the other gateways join with the payments capability.
 */
import type { TPaymentMethod } from '@svc/schemas';
import { minorToAmount } from '../../lib/money.js';
import type { Order } from '../orders/orders.entities.js';
import { publicOrderNumber } from '../orders/orders.service.js';
import type { Store } from '../stores/stores.entities.js';
import { storeSettings } from '../stores/stores.service.js';

export interface PaymentStart {
  redirectUrl?: string;
  instructions?: string;
}

export interface Gateway {
  method: TPaymentMethod;
  start(order: Order, store: Store): Promise<PaymentStart>;
}

/** The buyer pays as the seller instructs and the seller marks the order paid. */
export const manualGateway: Gateway = {
  method: 'manual',
  async start(order, store) {
    const amount = `${minorToAmount(order.priceMinor, order.currency)} ${order.currency}`;
    const custom = storeSettings(store).manualPaymentInstructions.trim();
    const reference = `Use ${publicOrderNumber(order.number)} as the payment reference.`;
    return {
      instructions: custom
        ? `${custom}\n\nAmount: ${amount}. ${reference}`
        : `Pay ${amount} to ${store.name} as they instruct you. ${reference} The order is delivered once the seller confirms the payment.`,
    };
  },
};

export const GATEWAYS: Record<TPaymentMethod, Gateway> = {
  manual: manualGateway,
};
