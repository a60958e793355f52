// What a desktop app does with the key its user typed: activate this machine once, validate at
// every start, deactivate on uninstall. The activation's instance id is kept in a state file.
//   SVC_PRODUCT_ID=... LICENSE_KEY=... node packages/sdk/examples/license-check.mjs            # start
//   SVC_PRODUCT_ID=... LICENSE_KEY=... node packages/sdk/examples/license-check.mjs uninstall  # uninstall
// (STATE_FILE defaults to ./.license-instance.json; INSTANCE_NAME to this machine's host name.)
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { createLicenseClient, isSvcError } from '@svc/sdk';

const licenses = createLicenseClient({
  baseUrl: process.env.SVC_BASE_URL ?? 'http://localhost:3000',
  productId: process.env.SVC_PRODUCT_ID,
});
const key = process.env.LICENSE_KEY ?? '';
const stateFile = process.env.STATE_FILE ?? '.license-instance.json';
const saved = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : null;

try {
  if (process.argv[2] === 'uninstall') {
    if (saved) {
      const { license } = await licenses.deactivate(key, saved.instanceId);
      rmSync(stateFile);
      console.log(
        `deactivated ${saved.instanceName}: ${license.activationUsage} of ${license.activationLimit ?? 'unlimited'} activations in use`,
      );
    } else {
      console.log('not activated on this machine');
    }
  } else {
    let instanceId = saved?.instanceId;
    if (!instanceId) {
      const instanceName = process.env.INSTANCE_NAME ?? hostname();
      const { instance, license } = await licenses.activate(key, instanceName);
      instanceId = instance.id;
      writeFileSync(stateFile, JSON.stringify({ instanceId, instanceName }));
      console.log(
        `activated ${instanceName}: ${license.activationUsage} of ${license.activationLimit ?? 'unlimited'} activations in use`,
      );
    }
    const { valid, reason, license } = await licenses.validate(key, instanceId);
    if (valid) {
      console.log(`license valid${license.expiresAt ? ` until ${license.expiresAt}` : ''}: starting`);
    } else {
      console.log(`license not valid (${reason}): starting in trial mode`);
      process.exitCode = 3;
    }
  }
} catch (error) {
  if (!isSvcError(error)) throw error;
  // activation_limit_reached, license_inactive, not_found (a mistyped key), rate_limited ...
  console.error(`${error.name} ${error.status ?? ''} ${error.code}: ${error.message}`);
  process.exitCode = 1;
}
