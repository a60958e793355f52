/**
 * `@svc/sdk/theme`: the theme client alone, with the errors its calls throw, for a storefront
 * that ships the SDK to browsers and should pay for nothing else. The service serves this entry
 * bundled and minified as one ES module at `/sdk/v1/theme.js`, for themes without a bundler.
 */
export {
  cartTaxLine,
  createThemeClient,
  formatPrice,
  planLabel,
  planPriceText,
  trialText,
  yearlySaving,
  type CartTaxLine,
} from '../theme.js';
export type {
  ThemeClient,
  ThemeClientOptions,
  CartLine,
  Cart,
  CartStorage,
  AppliedCoupon,
  CartBilling,
  CartCheckoutParams,
  Storefront,
  StorefrontProduct,
  StorefrontPlan,
  CheckoutParams,
  CheckoutResult,
  CreateOrderParams,
  CreatedOrder,
  CouponCheck,
  StartPaymentParams,
  PaymentStart,
  Delivery,
  DeliveredKeys,
  ClientGate,
  TrackEvent,
  OrderAccess,
} from '../theme.js';
export * from './errors.js';
