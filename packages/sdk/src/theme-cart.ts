/**
 * The buyer's cart, as a theme keeps it: product ids and quantities in the browser's
 * `localStorage`, one cart per store and mode (a test cart never mixes with the live one, whose
 * checkout would refuse it as `mixed_modes`), priced by the service whenever it is shown, with the
 * coupon the buyer applied, and the checkout that turns it into an order. Nothing stored here is
 * trusted for money: the service prices every line again, at every step.
 *
 * The theme client (theme.ts) carries one as `shop.cart`; the hosted cart page and the starter
 * theme both run on it and keep only their rendering.
 */
import type {
  CreateRequestOptions,
  ProcedureInput as In,
  ProcedureOutput as Out,
  RequestOptions,
} from './transport.js';

export interface CartLine {
  productId: string;
  /**
   * A recurring product's plan (one of its `plans`); left out (or null, as a priced one-time line
   * has it), the service takes a recurring product's first active plan.
   */
  planId?: string | null | undefined;
  /** How many; a recurring product's seats. */
  quantity: number;
}

/** A line as stored and sent: `planId` only when there is one. */
const lineOf = (productId: string, quantity: number, planId: string | null | undefined): CartLine =>
  planId === undefined || planId === null ? { productId, quantity } : { productId, planId, quantity };

export type Cart = Out<'checkout.cart'>;
export type CouponCheck = Out<'coupons.validate'>;
export type CheckoutParams = Omit<In<'checkout.checkout'>, 'shopId' | 'cart'> & { cart: readonly CartLine[] };
export type CheckoutResult = Out<'checkout.checkout'>;
/** What `shop.cart.checkout` takes besides the stored lines and the applied coupon. */
export type CartCheckoutParams = Omit<CheckoutParams, 'cart' | 'coupon'>;

/** Where the cart is kept: the browser's `localStorage`, or anything with its three methods. */
export interface CartStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The coupon the buyer applied, and what it took off the lines it was checked against. */
export interface AppliedCoupon {
  code: string;
  discount: number;
}

/**
 * Who the buyer is for tax: the billing country (ISO 3166-1 alpha-2) and a VAT id. A store that
 * charges tax prices the cart for this country (else for the request's own), and the checkout
 * takes both; a VAT id of another EU country makes a B2B sale (rate 0, reverse charge).
 */
export interface CartBilling {
  country?: string | undefined;
  taxId?: string | undefined;
}

/** The service calls the cart makes: the theme client's own. */
export interface CartCalls {
  price(lines: readonly CartLine[], billing: CartBilling, opts?: RequestOptions): Promise<Cart>;
  validateCoupon(params: { code: string; cart: readonly CartLine[] }, opts?: RequestOptions): Promise<CouponCheck>;
  checkout(params: CheckoutParams, opts?: CreateRequestOptions): Promise<CheckoutResult>;
}

/**
 * The storage key of a store's cart: `svc-cart:<store>`, and `svc-cart:<store>:test` for its test
 * products, where `<store>` is the store id when the client has one, else its subdomain.
 */
export function cartStorageKey(store: string, mode: 'live' | 'test'): string {
  return mode === 'test' ? `svc-cart:${store}:test` : `svc-cart:${store}`;
}

/** The platform's `localStorage`, when there is one and the page may use it. */
export function browserStorage(): CartStorage | undefined {
  try {
    // Reading it throws where storage is denied (a sandboxed frame, blocked cookies).
    return (globalThis as { localStorage?: CartStorage }).localStorage ?? undefined;
  } catch {
    return undefined;
  }
}

/** The stored lines that are lines: anything else in the key (an old format, a hand edit) is dropped. */
export function parseCartLines(stored: string | null): CartLine[] {
  try {
    const parsed: unknown = JSON.parse(stored ?? '[]');
    if (!Array.isArray(parsed)) return [];
    return parsed
      .filter(
        (line): line is CartLine =>
          typeof line === 'object' &&
          line !== null &&
          typeof (line as CartLine).productId === 'string' &&
          Number.isInteger((line as CartLine).quantity) &&
          (line as CartLine).quantity > 0,
      )
      .map((line) => {
        if (line.planId === undefined || typeof line.planId === 'string') return line;
        // A planId that is no id: the line stays, at the product's first plan.
        const kept: CartLine = { ...line };
        delete kept.planId;
        return kept;
      });
  } catch {
    return [];
  }
}

function checkQuantity(quantity: number): void {
  if (!Number.isInteger(quantity) || quantity < 1)
    throw new TypeError(`A cart quantity is a whole number of at least 1, not ${String(quantity)}.`);
}

/**
 * The cart kept under `key` in `storage()` (asked at each use, so a client made before the page
 * had storage, or on a server, still works; none: the cart lives in memory).
 */
export function storedCart(storage: () => CartStorage | undefined, key: string, calls: CartCalls) {
  /** The lines, while the storage refuses them (private mode, full): the cart lasts as long as the page. */
  let unsaved: CartLine[] | undefined;
  let coupon: AppliedCoupon | undefined;
  let billing: CartBilling = {};

  const read = (): CartLine[] => {
    if (unsaved) return unsaved.map((line) => ({ ...line }));
    try {
      return parseCartLines(storage()?.getItem(key) ?? null);
    } catch {
      return [];
    }
  };
  const save = (lines: CartLine[]): CartLine[] => {
    try {
      const target = storage();
      if (!target) throw new Error('no storage');
      if (lines.length === 0) target.removeItem(key);
      else target.setItem(key, JSON.stringify(lines));
      unsaved = undefined;
    } catch {
      unsaved = lines.map((line) => ({ ...line }));
    }
    return lines;
  };

  return {
    /** The buyer's lines as stored (product ids, plans and quantities), not yet priced. */
    lines: (): CartLine[] => read(),
    /**
     * Adds `quantity` (default 1) of a product: to its line when the cart has one, else as a new
     * last line. `planId` chooses a recurring product's plan (the line's plan changes to it).
     */
    add: (productId: string, quantity = 1, planId?: string): CartLine[] => {
      checkQuantity(quantity);
      const lines = read();
      const existing = lines.find((line) => line.productId === productId);
      return save(
        existing
          ? lines.map((line) =>
              line === existing ? lineOf(productId, line.quantity + quantity, planId ?? line.planId) : line,
            )
          : [...lines, lineOf(productId, quantity, planId)],
      );
    },
    /** Sets the quantity of a product's line (a product not in the cart is not added). */
    update: (productId: string, quantity: number): CartLine[] => {
      checkQuantity(quantity);
      return save(
        read().map((line) => (line.productId === productId ? lineOf(productId, quantity, line.planId) : line)),
      );
    },
    /** Chooses the plan of a recurring product's line (one of the line's `plans`; a product not in the cart is not added). */
    setPlan: (productId: string, planId: string): CartLine[] =>
      save(read().map((line) => (line.productId === productId ? lineOf(productId, line.quantity, planId) : line))),
    /** Takes a product's line out of the cart. */
    remove: (productId: string): CartLine[] => save(read().filter((line) => line.productId !== productId)),
    /** Empties the cart and drops the coupon. */
    clear: (): void => {
      save([]);
      coupon = undefined;
    },
    /**
     * The stored cart priced by the service (`GET /api/v1/cart`), which is then kept as the store
     * will sell it: removed lines leave, clamped quantities stay clamped; the answer says what
     * changed (`removed`, `adjusted`). `null` for an empty cart, without a call (and the coupon is
     * dropped). A failed call throws and leaves the stored lines as they were. The applied coupon's
     * discount was for the lines it was checked against: apply its code again once they changed.
     */
    load: async (opts?: RequestOptions): Promise<Cart | null> => {
      const lines = read();
      if (lines.length === 0) {
        coupon = undefined;
        return null;
      }
      const cart = await calls.price(lines, billing, opts);
      save(cart.lines.map((line) => lineOf(line.productId, line.quantity, line.planId)));
      return cart;
    },
    /**
     * Sets the buyer's billing country and VAT id (either left out: none): `load` prices the cart
     * for them, with its tax line, and `checkout` sends them. Kept in memory, as the coupon is.
     * The service checks them: an unknown country or a malformed VAT id fails the next call (400
     * naming `country` or `taxId`).
     */
    setBilling: (next: CartBilling): void => {
      billing = {
        ...(next.country !== undefined ? { country: next.country } : {}),
        ...(next.taxId !== undefined ? { taxId: next.taxId } : {}),
      };
    },
    /** The billing country and VAT id set for the cart, if any. */
    billing: (): CartBilling => ({ ...billing }),
    /** The coupon applied to the cart, if any: its code and the discount it gave. */
    coupon: (): AppliedCoupon | undefined => (coupon ? { ...coupon } : undefined),
    /**
     * Checks a coupon code against the stored lines (`POST /api/coupons/validate`): a valid one
     * is applied (and sent with the checkout), an invalid one, or a failed call, leaves none applied.
     */
    applyCoupon: async (code: string, opts?: RequestOptions): Promise<CouponCheck> => {
      try {
        const check = await calls.validateCoupon({ code, cart: read() }, opts);
        coupon = check.valid ? { code: check.code, discount: check.discount ?? 0 } : undefined;
        return check;
      } catch (error) {
        coupon = undefined;
        throw error;
      }
    },
    /** Drops the applied coupon. */
    removeCoupon: (): void => {
      coupon = undefined;
    },
    /**
     * Opens a pending order for the stored lines, with the applied coupon (`POST /api/v1/checkout`,
     * with an Idempotency-Key), then empties the cart: the order holds the lines now. Answers the
     * hosted checkout `url` to send the buyer to, where they give their e-mail (unless passed here)
     * and pay. The billing set with `setBilling` goes with it (`params` win). A failed call throws
     * and leaves the cart as it was.
     */
    checkout: async (params: CartCheckoutParams = {}, opts?: CreateRequestOptions): Promise<CheckoutResult> => {
      const result = await calls.checkout(
        { email: null, ...billing, ...params, cart: read(), ...(coupon ? { coupon: coupon.code } : {}) },
        opts,
      );
      save([]);
      coupon = undefined;
      return result;
    },
  };
}
