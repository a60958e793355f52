/**
 * The license client: what the merchant's own software (a desktop app, an Electron app, a web
 * app, a plugin) calls to check the license key its user typed. Public routes only, the key as
 * the credential; no secret ships with the software. It uses nothing but `fetch`, so it runs in
 * Node, browsers and Electron alike.
 *
 * ```ts
 * const licenses = createLicenseClient({ baseUrl: 'https://svc.example', productId: 'prod123' });
 * const { instance } = await licenses.activate(key, os.hostname()); // once, on first start
 * const { valid, reason } = await licenses.validate(key, instance.id); // at every start
 * await licenses.deactivate(key, instance.id); // on uninstall
 * ```
 */
import { createTransport, type ClientOptions, type ProcedureOutput as Out, type RequestOptions } from './transport.js';

export type LicenseClientOptions = ClientOptions & {
  /** The product whose keys this software accepts. */
  productId: string;
};

export type LicenseActivation = Out<'licenses.activate'>;
export type LicenseValidation = Out<'licenses.validate'>;
export type LicenseDeactivation = Out<'licenses.deactivate'>;

export type LicenseClient = ReturnType<typeof createLicenseClient>;

export function createLicenseClient(options: LicenseClientOptions) {
  if (typeof options.productId !== 'string' || options.productId.length === 0)
    throw new TypeError('Pass the productId of the product whose keys this software accepts.');
  const transport = createTransport(options);
  // Activation is idempotent per instance name and validation reads: both are safe to retry.
  const safe = { type: 'mutation', retry: 'safe' } as const;
  // A deactivation retried after a lost answer would find the instance gone (404).
  const once = { type: 'mutation', retry: 'rate-limit-only' } as const;
  const { productId } = options;

  return {
    /**
     * Activates this installation as `instanceName` (activating the same name again answers the
     * same instance and uses no extra activation). Errors: 404 `not_found` (no such key for this
     * product), 409 `activation_limit_reached`, 409 `license_inactive` (expired, disabled, or its
     * subscription paused or unpaid).
     */
    activate: (key: string, instanceName: string, opts?: RequestOptions): Promise<LicenseActivation> =>
      transport.call('licenses.activate', { productId, key, instanceName }, safe, opts),
    /**
     * Whether the license is valid now (and, with `instanceId`, whether that instance is still
     * one of its activations): `{ valid, reason: null | 'disabled' | 'subscription_inactive' |
     * 'expired' | 'instance_not_found' }`; a subscription's license is valid while its subscription
     * gives access (`license.subscriptionId`, `license.expiresAt`).
     */
    validate: (key: string, instanceId?: string, opts?: RequestOptions): Promise<LicenseValidation> =>
      transport.call(
        'licenses.validate',
        instanceId === undefined ? { productId, key } : { productId, key, instanceId },
        safe,
        opts,
      ),
    /** Frees this installation's activation (404 when the instance is not one of the license's). */
    deactivate: (key: string, instanceId: string, opts?: RequestOptions): Promise<LicenseDeactivation> =>
      transport.call('licenses.deactivate', { productId, key, instanceId }, once, opts),
  };
}
