/**
 * Relay, consumer, embedded transport and admin server, all with default options (no logger): the
 * consumer's handler fails SURETY_FAILURES times and the admin server refuses one login. Everything
 * it does is reported only by the components' own logs. Env: SURETY_DIR (a folder it may write).
 */
import { join } from 'node:path';
import { startAdminServer } from '../../src/admin/index.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createEmbeddedTransport } from '../../src/transports/embedded/index.js';
import { wire } from './consumer-env.js';
import { waitFor } from './wait.js';

const dir = process.env.SURETY_DIR!;
const failures = Number(process.env.SURETY_FAILURES ?? '9');
const store = await createSqliteStore({ path: join(dir, 'app.sqlite') });
await store.migrate();
const transport = await createEmbeddedTransport({ path: join(dir, 'log.sqlite'), pollIntervalMs: 20 });

const relay = new OutboxRelay({ store, publisher: transport });
await relay.start();

const consumer = new Consumer({ group: 'billing', store, transport, batchSize: 1 }).on('order.created', async () => {
  throw new Error('downstream answered 503');
});
await consumer.start();
for (let i = 0; i < failures; i++) {
  await transport.publish({ topic: 'order.created', message: wire({ type: 'order.created', payload: { i } }) });
}
await waitFor(
  'every failure recorded',
  async () => (await store.deadLetters.countDeadLetters('billing')).pending === failures,
);

const admin = await startAdminServer({
  store,
  tokens: [{ name: 'ops', role: 'operator', token: 'x'.repeat(32) }],
  port: 0,
});
const refused = await fetch(`${admin.url}/api/session`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ token: 'not-the-token' }),
});
if (refused.status !== 401) throw new Error(`login answered ${refused.status}`);

await admin.close();
await consumer.stop();
await relay.stop();
await transport.close();
await store.close();
