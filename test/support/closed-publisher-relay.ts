/**
 * A relay whose transport is closed under it, in its own process: the relay must keep yielding to the
 * event loop (a timer fires) and stop when asked. Prints "stopped" and exits 0 when it did both.
 * Env: SURETY_DIR, a directory for its two SQLite files.
 */
import { join } from 'node:path';
import { silentLogger } from '../../src/core/logger.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createEmbeddedTransport } from '../../src/transports/embedded/index.js';

const dir = process.env.SURETY_DIR;
if (!dir) throw new Error('SURETY_DIR is required');
const store = await createSqliteStore({ path: join(dir, 'outbox.sqlite') });
await store.migrate();
const transport = createEmbeddedTransport({ path: join(dir, 'log.sqlite'), pollIntervalMs: 20 });
const relay = new OutboxRelay({
  store,
  publisher: transport,
  logger: silentLogger,
  retention: false,
  pollIntervalMs: 50,
});
await relay.start();
await transport.close();
await new Promise((resolve) => setTimeout(resolve, 300)); // never fires if the relay's loop holds the thread
await relay.stop();
await store.close();
console.log('stopped');
