/** Redis for the webhooks benchmark: our own prefix, the wake-up channel, cleanup of every key under the prefix. */
import { createClient } from 'redis';
import { onCleanup } from '../lib/cleanup.mjs';
import { REDIS_URL } from '../lib/service.mjs';

export async function redisClient() {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  await client.connect();
  onCleanup('close bench Redis client', () => (client.isOpen ? client.close() : undefined));
  return client;
}

export async function deleteKeysUnder(client, prefix) {
  let deleted = 0;
  for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
    const keys = Array.isArray(batch) ? batch : [batch];
    if (keys.length > 0) deleted += await client.del(keys);
  }
  return deleted;
}
