export * from './api-keys.js';
export * from './common.js';
export * from './customers.js';
export * from './errors.js';
export * from './identity.js';
export * from './orders.js';
export * from './query.js';
export * from './stores.js';
