import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { testEnv, uniqueName } from '../support/env.js';
import { RabbitProbe } from '../support/rabbit.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';

describe('ORM transaction, process SIGKILLed between the commit and the publish (PostgreSQL -> RabbitMQ)', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  let probe: RabbitProbe;
  let queue: string;
  let table: string;

  beforeEach(async () => {
    f = await makePostgresFixture('orm_crash');
    probe = await RabbitProbe.open('orm_crash');
    queue = await probe.bindQueue('#');
    table = uniqueName('crash_orders');
    await f.pool.query(`CREATE TABLE ${table} (id text PRIMARY KEY)`);
  });
  afterEach(async () => {
    await f.pool.query(`DROP TABLE IF EXISTS ${table}`);
    await probe.close();
    await f.teardown();
  });

  for (const orm of ['kysely', 'knex', 'drizzle', 'typeorm', 'prisma', 'mikro-orm']) {
    it(`${orm}: the committed message goes out once, published by the next relay`, async () => {
      const key = randomUUID();
      const child = spawnTs('integrations/commit-crash-process.ts', {
        SURETY_ORM: orm,
        SURETY_PG_URL: testEnv.postgresUrl,
        SURETY_PG_SCHEMA: f.schema,
        SURETY_AMQP_URL: testEnv.amqpUrl,
        SURETY_EXCHANGE: probe.exchange,
        SURETY_KEY: key,
        SURETY_TABLE: table,
      });
      const end = await exited(child);
      expect(end.signal, end.stderr).toBe('SIGKILL');
      // It died after the commit (the order and its message are there) and before any publish.
      expect((await f.pool.query(`SELECT id FROM ${table}`)).rows).toEqual([{ id: key }]);
      expect(await f.store.outbox.stats()).toMatchObject({ pending: 1, sent: 0 });
      const { rows } = await f.pool.query(
        `SELECT message_id::text AS id FROM ${f.store.tables.outbox} WHERE msg_key = $1`,
        [key],
      );
      expect(await probe.count(queue)).toBe(0);

      const transport = await createRabbitMqTransport({ url: testEnv.amqpUrl, exchange: probe.exchange });
      const relay = new OutboxRelay({ store: f.store, publisher: transport, logger: silentLogger, pollIntervalMs: 50 });
      await relay.start();
      try {
        await waitFor('the row sent', async () => (await f.store.outbox.stats()).sent === 1);
      } finally {
        await relay.stop();
        await transport.close();
      }
      expect(await probe.collect(queue, 1)).toEqual([rows[0].id]);
      expect(await probe.drain(queue)).toEqual([]);
    });
  }
});
