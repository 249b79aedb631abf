import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { connect } from 'amqplib';
import pg from 'pg';
import { Controller, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Consumer,
  InvalidOptionError,
  Outbox,
  OutboxRelay,
  ReplayJob,
  type HandlerContext,
  type OutgoingMessage,
  type Store,
  type Transport,
} from 'surety';
import {
  SURETY_CONSUMERS,
  SURETY_OUTBOX,
  SURETY_RELAY,
  SURETY_REPLAY_JOBS,
  SURETY_STORE,
  SURETY_TRANSPORT,
  SuretyHandler,
  SuretyModule,
  getConsumerToken,
  getReplayJobToken,
  type SuretyModuleOptions,
} from 'surety/nestjs';
import { createPostgresStore } from 'surety/postgres';
import { createRabbitMqTransport, parkingQueueName } from 'surety/rabbitmq';
import { testMessage } from 'surety/testing';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

// SuretyModule in this process, on real PostgreSQL (a schema per test) and RabbitMQ (an exchange and queue per test).

interface Seen {
  readonly payload: unknown;
  readonly context: HandlerContext;
  readonly self: unknown;
}

/** The current test's table: the store's schema holds Surety's tables, not the session's search path. */
let invoices = '';

@Injectable()
class RecordingHandler {
  readonly seen: Seen[] = [];

  @SuretyHandler('order.created', { group: 'billing' })
  async invoice(payload: { id: string }, context: HandlerContext): Promise<void> {
    await context.tx.query(`INSERT INTO ${invoices} (order_id) VALUES ($1)`, [payload.id]);
    this.seen.push({ payload, context, self: this });
  }
}

@Injectable()
class OrphanHandler {
  @SuretyHandler('order.created', { group: 'nobody' })
  async handle(): Promise<void> {}
}

function appModule(surety: DynamicModule, providers: unknown[], controllers: unknown[] = []): new () => unknown {
  @Module({ imports: [surety], providers: providers as never[], controllers: controllers as never[] })
  class TestModule {}
  return TestModule;
}

const run = promisify(execFile);

/** The sessions PostgreSQL holds for the application named `name`. */
async function pgSessions(name: string): Promise<number> {
  const client = new pg.Client({ connectionString: testEnv.postgresUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [name],
    );
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

/** The connections RabbitMQ holds with the client-provided name `name`. */
async function amqpConnections(name: string): Promise<number> {
  const { stdout } = await run('rabbitmqctl', ['list_connections', 'client_properties', '-q'], { timeout: 60_000 });
  return stdout.split('\n').filter((line) => line.includes(`{"connection_name","${name}"}`)).length;
}

const probeMessage = (): OutgoingMessage => ({ topic: 'probe', message: testMessage('probe') });

const open: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const resource of open.splice(0).reverse()) await resource.close().catch(() => undefined);
});

/** A transport factory on an exchange and queue named `name`, both deleted after the test. */
function rabbitFactory(name: string) {
  open.push({
    close: async () => {
      const connection = await connect(testEnv.amqpUrl);
      try {
        const channel = await connection.createChannel();
        await channel.deleteQueue(name);
        await channel.deleteQueue(parkingQueueName(name));
        await channel.deleteExchange(name);
      } finally {
        await connection.close();
      }
    },
  });
  return () =>
    createRabbitMqTransport({
      url: testEnv.amqpUrl,
      exchange: name,
      queueForGroup: () => name,
      topology: { queues: [{ name }], bindings: [{ exchange: name, queue: name, pattern: '#' }] },
      // Names its connection on the broker, where a test can look for it.
      connectionName: name,
      logger: null,
    });
}

/** The PostgreSQL URL whose sessions name themselves `name` in pg_stat_activity. */
const namedSessions = (name: string) => {
  const url = new URL(testEnv.postgresUrl);
  url.searchParams.set('application_name', name);
  return url.toString();
};

async function schemaStore(schema: string): Promise<Store> {
  const store = await createPostgresStore({ connectionString: namedSessions(schema), schema });
  // Dropped on a connection of its own: the module may have closed the store by then.
  open.push({
    close: async () => {
      const client = new pg.Client({ connectionString: testEnv.postgresUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
    },
  });
  return store;
}

describe('SuretyModule', () => {
  it('runs a decorated method as its group handler in the consumer transaction, injects each component, and at shutdown stops replay, consumer, relay in that order and closes only what it created', async () => {
    const name = uniqueName('nest_module');
    invoices = `${name}.invoices`;
    const store = await schemaStore(name); // an instance: the application's to close
    await store.transaction((tx) => tx.query(`CREATE SCHEMA IF NOT EXISTS ${name}`));
    const steps: string[] = [];
    const transportFactory = rabbitFactory(name);
    const app = await NestFactory.createApplicationContext(
      appModule(
        SuretyModule.forRoot({
          store,
          transport: transportFactory,
          migrate: true,
          relay: { logger: null },
          consumers: [{ group: 'billing', logger: null }],
        }),
        [RecordingHandler],
      ),
      { logger: false, abortOnError: false },
    );
    open.push({ close: () => app.close() });
    await store.transaction((tx) => tx.query(`CREATE TABLE ${name}.invoices (order_id text PRIMARY KEY)`));

    const consumer = app.get<Consumer>(getConsumerToken('billing'));
    const replay = app.get<ReplayJob>(getReplayJobToken('billing'));
    const relay = app.get<OutboxRelay>(SURETY_RELAY);
    const transport = app.get<Transport>(SURETY_TRANSPORT);
    expect(consumer).toBeInstanceOf(Consumer);
    expect(app.get<ReadonlyMap<string, Consumer>>(SURETY_CONSUMERS).get('billing')).toBe(consumer);
    expect(app.get<ReadonlyMap<string, ReplayJob>>(SURETY_REPLAY_JOBS).get('billing')).toBe(replay);
    expect(replay).toBeInstanceOf(ReplayJob);
    expect(relay).toBeInstanceOf(OutboxRelay);
    expect(app.get(SURETY_STORE)).toBe(store);

    const outbox = app.get<Outbox>(SURETY_OUTBOX);
    expect(outbox).toBeInstanceOf(Outbox);
    const added = await outbox.transaction((tx) =>
      outbox.add(tx, { type: 'order.created', key: 'o-1', payload: { id: 'o-1' } }),
    );
    const handler = app.get(RecordingHandler);
    await waitFor('the handler', () => handler.seen.length === 1);
    const [call] = handler.seen;
    expect(call!.self).toBe(handler);
    expect(call!.payload).toEqual({ id: 'o-1' });
    expect(call!.context).toMatchObject({ group: 'billing', replay: false, envelope: { id: added.messageId } });
    // The handler's write and the inbox record committed together (the handler was seen before its commit).
    const committed = () =>
      store.transaction((tx) =>
        tx.query<{ order_id: string; inbox: number }>(
          `SELECT i.order_id, (SELECT count(*)::int FROM ${name}.surety_inbox WHERE message_id = $1) AS inbox FROM ${name}.invoices i`,
          [added.messageId],
        ),
      );
    await waitFor('the commit', async () => (await committed()).rows.length > 0);
    expect((await committed()).rows).toEqual([{ order_id: 'o-1', inbox: 1 }]);

    const record = (label: string, target: { [k: string]: unknown }, method: string) => {
      const original = (target[method] as () => Promise<void>).bind(target);
      target[method] = async () => {
        steps.push(`${label} ${method}`);
        await original();
      };
    };
    record('replay', replay as never, 'stop');
    record('consumer', consumer as never, 'stop');
    record('relay', relay as never, 'stop');
    const relayStop = relay.stop.bind(relay);
    relay.stop = async () => {
      steps.push(`transport ready: ${transport.isReady()}`);
      await relayStop();
    };
    await app.close();
    expect(steps).toEqual(['replay stop', 'consumer stop', 'transport ready: true', 'relay stop']);
    // The transport the module created is closed after the relay stopped; the store given as an instance is not.
    await expect(transport.publish(probeMessage())).rejects.toMatchObject({ code: 'SURETY_TRANSPORT_CLOSED' });
    // The store given as an instance is still open.
    expect((await store.transaction((tx) => tx.query<{ one: number }>('SELECT 1 AS one'))).rows).toEqual([{ one: 1 }]);
    open.push(store);
  });

  it('forRootAsync builds from an injected provider, gives listed groups their tokens, runs no relay with relay: false, and closes what its factories made', async () => {
    const name = uniqueName('nest_async');
    invoices = `${name}.invoices`;
    let store: Store | undefined;
    const transportFactory = rabbitFactory(name);
    @Module({ providers: [{ provide: 'SCHEMA', useValue: name }], exports: ['SCHEMA'] })
    class SettingsModule {}
    const app = await NestFactory.createApplicationContext(
      appModule(
        SuretyModule.forRootAsync({
          imports: [SettingsModule],
          inject: ['SCHEMA'],
          useFactory: (schema: string) => ({
            store: async () => (store = await schemaStore(schema)),
            transport: transportFactory,
            migrate: true,
            relay: false,
            consumers: [{ group: 'billing', logger: null, replay: false }],
          }),
          groups: ['billing'],
        }),
        [RecordingHandler],
      ),
      { logger: false, abortOnError: false },
    );
    open.push({ close: () => app.close() });
    expect(app.get<Consumer>(getConsumerToken('billing')).group).toBe('billing');
    expect(app.get(SURETY_RELAY)).toBeUndefined();
    expect(app.get<ReadonlyMap<string, ReplayJob>>(SURETY_REPLAY_JOBS).size).toBe(0);
    expect(app.get(getReplayJobToken('billing'))).toBeUndefined();
    // Migrated into the schema the injected provider named.
    const tables = await store!.transaction((tx) =>
      tx.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'surety_inbox'`,
        [name],
      ),
    );
    expect(tables.rows).toEqual([{ n: 1 }]);
    await app.close();
    await expect(store!.transaction((tx) => tx.query('SELECT 1'))).rejects.toThrow();
  });

  /** Starts an application that must fail; returns the error and the store and transport its factories made. */
  async function failedStart(
    label: string,
    options: Partial<SuretyModuleOptions> & { transport?: () => Promise<Transport> },
    providers: unknown[],
  ): Promise<{ err: unknown; store: Store; transport: Transport }> {
    const name = uniqueName(label);
    const created: { store?: Store; transport?: Transport } = {};
    const transportFactory = options.transport ?? rabbitFactory(name);
    const err = await NestFactory.createApplicationContext(
      appModule(
        SuretyModule.forRoot({
          consumers: [{ group: 'billing', logger: null }],
          relay: { logger: null },
          ...options,
          store: async () => (created.store = await schemaStore(name)),
          transport: async () => (created.transport = await transportFactory()),
        }),
        providers,
      ),
      { logger: false, abortOnError: false },
    ).then(
      (app) => (open.push(app), undefined),
      (e: unknown) => e,
    );
    return { err, store: created.store!, transport: created.transport! };
  }

  /** Both were closed: neither can be used any more. */
  async function expectClosed({ store, transport }: { store: Store; transport: Transport }): Promise<void> {
    await expect(transport.publish(probeMessage())).rejects.toMatchObject({ code: 'SURETY_TRANSPORT_CLOSED' });
    await expect(store.transaction((tx) => tx.query('SELECT 1'))).rejects.toThrow();
  }

  it('refuses at bootstrap a handler whose group has no consumer, naming it, and closes what it had opened', async () => {
    const failed = await failedStart('nest_orphan', {}, [OrphanHandler, RecordingHandler]);
    expect(failed.err).toBeInstanceOf(InvalidOptionError);
    expect(failed.err).toMatchObject({ code: 'SURETY_INVALID_OPTION', option: 'SuretyModule.consumers' });
    expect((failed.err as Error).message).toContain('"nobody", which @SuretyHandler on OrphanHandler.handle names');
    await expectClosed(failed);
  });

  it('refuses at bootstrap a consumer group that no handler names', async () => {
    const failed = await failedStart('nest_idle', {}, []);
    expect(failed.err).toMatchObject({ code: 'SURETY_INVALID_OPTION', option: 'SuretyModule.consumers' });
    expect((failed.err as Error).message).toContain('group "billing" has no @SuretyHandler method');
    await expectClosed(failed);
  });

  it('fails the start when RabbitMQ cannot be reached, and closes what it had opened', async () => {
    // Port 1: nothing listens, every connect is refused.
    const unreachable = () =>
      createRabbitMqTransport({ url: 'amqp://guest:guest@127.0.0.1:1', startTimeoutMs: 500, logger: null });
    const failed = await failedStart('nest_no_broker', { transport: unreachable, migrate: true }, [RecordingHandler]);
    expect(failed.err).toMatchObject({ code: 'SURETY_CONNECTION_LOST' });
    await expectClosed(failed);
  });

  it('refuses a forRootAsync group the factory configured no consumer for, and closes what it opened', async () => {
    const name = uniqueName('nest_groups');
    let store: Store | undefined;
    const err = await NestFactory.createApplicationContext(
      appModule(
        SuretyModule.forRootAsync({
          useFactory: () => ({
            store: async () => (store = await schemaStore(name)),
            transport: rabbitFactory(name),
            consumers: [{ group: 'billing', logger: null }],
          }),
          groups: ['billing', 'shipping'],
        }),
        [RecordingHandler],
      ),
      { logger: false, abortOnError: false },
    ).then(
      (app) => (open.push(app), undefined),
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'SURETY_INVALID_OPTION', option: 'SuretyModule.groups' });
    expect((err as Error).message).toContain('"shipping" is not among the consumers');
    await expect(store!.transaction((tx) => tx.query('SELECT 1'))).rejects.toThrow();
  });

  // Nest rejects NestFactory.create with no application to close and runs no hook: the module must notice by itself.
  const providerFailures: [when: string, fails: 'after' | 'while' | 'controller'][] = [
    ['an application provider that injects the outbox fails in its factory', 'after'],
    ['an unrelated provider fails while the store is still being opened', 'while'],
    // Controllers are created once their module's providers exist: a later load than Surety's.
    ['a controller fails in its constructor', 'controller'],
  ];
  it.each(providerFailures)(
    'closes the store and transport it created when %s, leaving no PostgreSQL session or RabbitMQ connection',
    async (_when, fails) => {
      const name = uniqueName(`nest_fails_${fails}`);
      const transportFactory = rabbitFactory(name);
      let storeOpening!: () => void;
      const opening = new Promise<void>((resolve) => (storeOpening = resolve));
      let provider: Promise<void> | undefined;
      const created: { store?: Store; transport?: Transport } = {};
      const whileOpen = { sessions: 0, connections: 0 };
      const refusal = new Error('the application cannot start');
      const failing =
        fails === 'after'
          ? [{ provide: 'FailingService', inject: [SURETY_OUTBOX], useFactory: () => Promise.reject(refusal) }]
          : fails === 'while'
            ? [
                {
                  provide: 'FailingService',
                  useFactory: async () => {
                    await (provider = opening);
                    throw refusal;
                  },
                },
              ]
            : [];
      @Controller()
      class FailingController {
        constructor() {
          throw refusal;
        }
      }
      const err = await NestFactory.createApplicationContext(
        appModule(
          SuretyModule.forRoot({
            consumers: [{ group: 'billing', logger: null }],
            relay: { logger: null },
            store: async () => {
              storeOpening();
              // Nest has rejected by now when the failure comes first: what opens from here on must close too.
              if (fails === 'while') await provider?.catch(() => undefined);
              const store = (created.store = await schemaStore(name));
              await store.transaction((tx) => tx.query('SELECT 1')); // holds a session in the pool
              whileOpen.sessions = await pgSessions(name);
              return store;
            },
            transport: async () => {
              created.transport = await transportFactory();
              whileOpen.connections = await amqpConnections(name);
              return created.transport;
            },
          }),
          [RecordingHandler, ...failing],
          fails === 'controller' ? [FailingController] : [],
        ),
        { logger: false, abortOnError: false },
      ).then(
        (app) => (open.push(app), undefined),
        (e: unknown) => e,
      );
      expect(err).toBe(refusal);
      // Closed by the module: a closed store refuses a transaction, a closed transport is not ready.
      await waitFor(
        'the module to close what it created',
        async () =>
          created.transport?.isReady() === false &&
          (await created
            .store!.transaction((tx) => tx.query('SELECT 1'))
            .then(
              () => false,
              () => true,
            )),
        20_000,
      );
      expect(whileOpen.sessions).toBeGreaterThan(0);
      expect(whileOpen.connections).toBe(1);
      await waitFor('no PostgreSQL session left', async () => (await pgSessions(name)) === 0, 10_000);
      await waitFor('no RabbitMQ connection left', async () => (await amqpConnections(name)) === 0, 10_000);
    },
  );

  const refusals: [options: object, option: string, detail: string][] = [
    [{ store: 42, transport: () => undefined }, 'SuretyModule.store', 'must be a Store or a function'],
    [{ store: () => undefined }, 'SuretyModule.transport', 'must be a Transport or a function'],
    [
      { store: () => undefined, transport: () => undefined, consumers: [{ group: 'a' }, { group: 'a' }] },
      'SuretyModule.consumers[1].group',
      '"a" is configured twice',
    ],
    [{ store: () => undefined, transport: () => undefined, relay: 3 }, 'SuretyModule.relay', 'must be false or'],
    [{ store: () => undefined, transport: () => undefined, storage: {} }, 'SuretyModule', 'storage'],
  ];
  it.each(refusals)('refuses options %j before creating anything: %s', async (options, option, detail) => {
    const err = await NestFactory.createApplicationContext(
      appModule(SuretyModule.forRootAsync({ useFactory: () => options as unknown as SuretyModuleOptions }), []),
      { logger: false, abortOnError: false },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'SURETY_INVALID_OPTION', option });
    expect((err as Error).message).toContain(detail);
  });

  it('refuses a @SuretyHandler without a group where it is written', () => {
    expect(() => SuretyHandler('order.created', { group: '' })).toThrow(
      expect.objectContaining({ code: 'SURETY_INVALID_OPTION', option: '@SuretyHandler.group' }),
    );
  });
});
