/**
 * An order placed through an ORM's transaction in its own process, killed with SIGKILL the moment
 * the commit is announced: after the ORM committed, before the relay beside it could publish.
 * SURETY_ORM picks kysely, knex, drizzle, typeorm, prisma or mikro-orm (on PostgreSQL); the order's
 * id is SURETY_KEY, written to SURETY_TABLE and to the outbox in one transaction.
 */
import { MikroORM } from '@mikro-orm/postgresql';
import { Kysely, PostgresDialect } from 'kysely';
import knexFactory from 'knex';
import { drizzle } from 'drizzle-orm/node-postgres';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { silentLogger } from '../../src/core/logger.js';
import { drizzleTransaction } from '../../src/integrations/drizzle/index.js';
import { knexExecutor } from '../../src/integrations/knex/index.js';
import { kyselyTransaction } from '../../src/integrations/kysely/index.js';
import { mikroOrmExecutor } from '../../src/integrations/mikro-orm/index.js';
import { typeormExecutor } from '../../src/integrations/typeorm/index.js';
import { prismaTransaction } from '../../src/integrations/prisma/index.js';
import type { SqlExecutor } from '../../src/ports/sql-executor.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { PrismaClient } from './prisma/generated/postgres/client.js';

const env = (name: string) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`${name} is required`);
  return v;
};
const url = env('SURETY_PG_URL');
const key = env('SURETY_KEY');
const table = env('SURETY_TABLE');

const store = await createPostgresStore({ connectionString: url, schema: env('SURETY_PG_SCHEMA') });
const transport = await createRabbitMqTransport({ url: env('SURETY_AMQP_URL'), exchange: env('SURETY_EXCHANGE') });
const outbox = new Outbox({ store });
// Woken by the commit, this relay would publish at once; it never polls within the test.
const relay = new OutboxRelay({ store, publisher: transport, outbox, logger: silentLogger, pollIntervalMs: 600_000 });
await relay.start();
outbox.onCommitted(() => process.kill(process.pid, 'SIGKILL'));

const place = async (tx: SqlExecutor, insertOrder: () => Promise<unknown>) => {
  await insertOrder();
  await outbox.add(tx, { type: 'order.created', key, payload: { id: key } });
};
const pool = new pg.Pool({ connectionString: url, max: 2 });
const orm = env('SURETY_ORM');
if (orm === 'kysely') {
  const db = new Kysely<Record<string, { id: string }>>({ dialect: new PostgresDialect({ pool }) });
  await kyselyTransaction(db, outbox, (trx, tx) =>
    place(tx, () => trx.insertInto(table).values({ id: key }).execute()),
  );
} else if (orm === 'knex') {
  const knex = knexFactory({ client: 'pg', connection: url });
  await knex.transaction((trx) => place(knexExecutor(trx, outbox), () => trx(table).insert({ id: key })));
} else if (orm === 'typeorm') {
  const source = await new DataSource({ type: 'postgres', url }).initialize();
  await source.transaction((manager) =>
    place(typeormExecutor(manager, outbox), () => manager.insert(table, { id: key })),
  );
} else if (orm === 'mikro-orm') {
  const mikro = await MikroORM.init({ clientUrl: url, entities: [], discovery: { warnWhenNoEntities: false } });
  await mikro.em.transactional((em) =>
    place(mikroOrmExecutor(em, outbox), () => em.execute(`INSERT INTO ${table} (id) VALUES (?)`, [key])),
  );
} else if (orm === 'prisma') {
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 2 }) });
  await prismaTransaction(prisma, outbox, (trx, tx) =>
    place(tx, () => trx.$executeRawUnsafe(`INSERT INTO ${table} (id) VALUES ($1)`, key)),
  );
} else {
  const db = drizzle(pool);
  await drizzleTransaction(db, outbox, (trx, tx) =>
    place(tx, () => trx.execute(`INSERT INTO ${table} (id) VALUES ('${key}')`)),
  );
}
console.error('the commit was not announced');
process.exit(3);
