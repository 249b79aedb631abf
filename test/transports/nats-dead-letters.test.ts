import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import { createNatsTransport, type NatsTransport } from '../../src/transports/nats/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { wire } from '../support/consumer-env.js';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';
import { NatsAdmin } from './fixtures/nats-admin.js';

/** The real consumer on PostgreSQL over JetStream: what the broker gives up on ends in the dead-letter table. */
describe('NATS JetStream into the dead-letter table (PostgreSQL)', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  let admin: NatsAdmin;
  let topic: string;
  let transport: NatsTransport;
  let consumer: Consumer | undefined;
  const group = 'billing';

  beforeEach(async () => {
    f = await makePostgresFixture('nats_dl');
    admin = await NatsAdmin.open();
    topic = uniqueName('nats_dl');
    await admin.stream(topic, [`${topic}.>`]);
    transport = await createNatsTransport({ url: testEnv.natsUrl, subjectPrefix: topic, maxDeliver: 3, logger: null });
    expect(await transport.waitUntilReady(10_000)).toBe(true);
  });
  afterEach(async () => {
    await consumer?.stop();
    await transport.close();
    await admin.close();
    await f.teardown();
  });

  const pending = async () => {
    const info = await admin.jsm.consumers.info(topic, group);
    return info.num_ack_pending + info.num_pending;
  };

  it('records a message JetStream gave up on (max_deliver) as dead, after the handler ran max_deliver - 1 times', async () => {
    const store = f.store as unknown as ConsumerStore;
    let runs = 0;
    consumer = new Consumer({ group, store, transport, logger: silentLogger, brokerRetry: { enabled: true } }).on(
      'order.created',
      async () => {
        runs++;
        throw new Error('downstream unavailable');
      },
    );
    await consumer.start();
    const sent = wire({ type: 'order.created', key: 'k-1', payload: { total: 42 } });
    await transport.publish({ topic: 'order.created', message: sent });
    await waitFor('the dead letter', async () => (await store.deadLetters.getDeadLetter(sent.id, group)) !== undefined);
    await waitFor('the exhausted delivery acked', async () => (await pending()) === 0);
    expect(runs).toBe(2);
    const row = (await store.deadLetters.getDeadLetter(sent.id, group))!;
    expect(row).toMatchObject({ messageId: sent.id, topic: 'order.created', status: 'dead', poison: false });
    expect(row.lastError).toContain('after 2 deliveries (max_deliveries)');
    expect(Buffer.from(row.body, row.bodyEncoding).equals(sent.body)).toBe(true);
  });

  it('dead-letters a foreign message without Nats-Msg-Id or headers as poison, and keeps consuming', async () => {
    const store = f.store as unknown as ConsumerStore;
    const handled: string[] = [];
    consumer = new Consumer({ group, store, transport, logger: silentLogger }).on(
      'order.created',
      async (_p, { envelope }) => void handled.push(envelope.id),
    );
    await consumer.start();
    await admin.nc.request(`${topic}.order.created`, new TextEncoder().encode('{"raw":true}'));
    const good = wire({ type: 'order.created', payload: {} });
    await transport.publish({ topic: 'order.created', message: good });
    await waitFor('the good message handled', () => handled.includes(good.id));
    await waitFor('nothing left unsettled', async () => (await pending()) === 0);
    const { rows } = await f.pool.query(
      `SELECT message_id, status, poison, last_error FROM "${f.schema}".surety_dead_letters WHERE group_name = $1`,
      [group],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'dead', poison: true });
    expect(handled).toEqual([good.id]);
  });
});
