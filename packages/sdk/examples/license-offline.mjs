// Running offline: activate once online and keep the lease and the store's JWKS; at every start
// verify the lease with no network; refresh it (validate) whenever the service answers.
//   SVC_STORE_ID=... SVC_PRODUCT_ID=... LICENSE_KEY=... node packages/sdk/examples/license-offline.mjs
// (STATE_FILE defaults to ./.license-lease.json; INSTANCE_NAME to this machine's host name;
// ALLOW_TEST_LICENSES=1 accepts a lease of the store's test mode, for a development build.)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { createLicenseClient, fetchJwks, isSvcError, LeaseInvalidError, verifyLicenseLease } from '@svc/sdk/licenses';

const baseUrl = process.env.SVC_BASE_URL ?? 'http://localhost:3000';
const productId = process.env.SVC_PRODUCT_ID;
const licenses = createLicenseClient({ baseUrl, productId, maxRetries: 0 });
const key = process.env.LICENSE_KEY ?? '';
const stateFile = process.env.STATE_FILE ?? '.license-lease.json';
let state = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : null;

// Online when the service answers: activate (first start) or validate, and keep the new lease.
try {
  const answer = state
    ? await licenses.validate(key, state.instanceId)
    : await licenses.activate(key, process.env.INSTANCE_NAME ?? hostname());
  if (answer.lease) {
    const jwks = await fetchJwks(baseUrl, process.env.SVC_STORE_ID);
    state = { instanceId: answer.instance.id, lease: answer.lease, jwks };
    writeFileSync(stateFile, JSON.stringify(state));
    console.log('online: lease refreshed');
  } else {
    state = null;
    writeFileSync(stateFile, 'null');
    console.log(`online: license not valid (${answer.reason})`);
  }
} catch (error) {
  if (!isSvcError(error)) throw error;
  // The service is not reachable (or refused): what the kept lease says decides.
  console.log(`offline (${error.code}): using the kept lease`);
}

// Every start, online or not: the lease, verified with no network.
try {
  if (!state) throw new LeaseInvalidError('malformed', 'no lease kept: activate while online');
  const claims = await verifyLicenseLease(state.lease, { jwks: state.jwks, productId });
  // The store's JWKS holds its test-mode keys too: a release build takes live licenses only.
  if (!claims.livemode && process.env.ALLOW_TEST_LICENSES !== '1') {
    console.log('a test-mode license: starting in trial mode');
    process.exitCode = 3;
  } else {
    console.log(`license valid offline until ${new Date(claims.exp * 1000).toISOString()}: starting`);
  }
} catch (error) {
  if (!(error instanceof LeaseInvalidError)) throw error;
  console.log(`no valid lease (${error.reason}): starting in trial mode`);
  process.exitCode = 3;
}
