/** Loopback ports for the test's own servers. */
import { createServer, type AddressInfo } from 'node:net';

/** A loopback port that was free a moment ago (for a server that starts later). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
