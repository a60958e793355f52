export * from './errors.js';
export * from './stores.js';
export * from './query.js';
