import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAdminServer, type AdminServer } from '../../src/admin/http/admin-server.js';
import { runDoctor } from '../../src/admin/doctor/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { ReplayJob } from '../../src/consumer/replay-job.js';
import type { DeadLetterRow } from '../../src/ports/consumer-store.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createEmbeddedTransport } from '../../src/transports/embedded/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { uniqueName } from './env.js';
import { storeFixtures } from './stores.js';
import { waitFor } from './wait.js';

type Store = StoreFixture['store'];

export interface ConsoleApp {
  /** The console's address, with a trailing slash. */
  readonly url: string;
  readonly operatorToken: string;
  readonly viewerToken: string;
  readonly group: string;
  /** The store holding the consumer's inbox and dead letters (on one store, also the outbox). */
  readonly store: Store;
  /** Order keys whose payment fails; delete a key and its replay succeeds. */
  readonly failing: Set<string>;
  /** Order keys the handler committed, once per successful run. */
  readonly handled: string[];
  /** Writes an order.created event through the outbox; the relay publishes it to the consumer. */
  order(key: string): Promise<string>;
  /** The group's dead letter of a message once the consumer has written it with `status`. */
  deadLetter(messageId: string, status: DeadLetterRow['status']): Promise<DeadLetterRow>;
  close(): Promise<void>;
}

export interface MultiStoreConsoleApp extends ConsoleApp {
  /** Store "orders": the producer's outbox, relayed by its relay. */
  readonly orders: Store;
  /** Store "billing" (also `store`): the consumer's inbox and dead letters, replayed by its replay job. */
  readonly billing: Store;
}

/**
 * The whole path the console looks at, for real: outbox and relay, the embedded log, a consumer whose handler fails
 * the keys in `failing` (each failure goes dead at once: retries are the operator's call), its replay job, and the
 * admin server, all on one store of `dialect`. `allowEdit` turns on edit-then-replay.
 */
export async function startConsoleApp(
  dialect: 'sqlite' | 'postgres',
  options: { allowEdit?: boolean } = {},
): Promise<ConsoleApp> {
  const fixture = await storeFixtures[dialect](`console_${dialect}`);
  const store = fixture.store as Store;
  return startPipeline({
    producer: store,
    consumer: store,
    admin: { store },
    allowEdit: options.allowEdit ?? false,
    cleanup: async () => fixture.teardown(),
  });
}

/**
 * The same path across two databases, as in production: the producer's outbox in the SQLite file of store "orders",
 * the consumer's inbox and dead letters in the SQLite file of store "billing"; one console serves both.
 */
export async function startMultiStoreConsoleApp(): Promise<MultiStoreConsoleApp> {
  const dir = mkdtempSync(join(tmpdir(), 'surety-stores-'));
  const opened: Store[] = [];
  const cleanup = async () => {
    for (const store of opened) await store.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const name of ['orders', 'billing']) {
      const store = (await createSqliteStore({ path: join(dir, `${name}.sqlite`) })) as Store;
      opened.push(store);
      await store.migrate();
    }
    const [orders, billing] = opened as [Store, Store];
    const app = await startPipeline({
      producer: orders,
      consumer: billing,
      admin: { stores: { orders, billing } },
      allowEdit: false,
      cleanup,
    });
    return { ...app, orders, billing };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

interface PipelineOptions {
  readonly producer: Store;
  readonly consumer: Store;
  /** How the admin server is given its stores: one, or several by name. */
  readonly admin: { store: Store } | { stores: Record<string, Store> };
  readonly allowEdit: boolean;
  /** Runs last, after everything the pipeline started has stopped; it owns the stores. */
  readonly cleanup: () => Promise<unknown>;
}

async function startPipeline({ producer, consumer: store, admin, allowEdit, cleanup }: PipelineOptions) {
  const dir = mkdtempSync(join(tmpdir(), 'surety-console-'));
  const cleanups: (() => Promise<unknown>)[] = [cleanup, async () => rmSync(dir, { recursive: true, force: true })];
  const close = async () => {
    for (const step of cleanups.reverse()) await step().catch(() => undefined);
  };
  try {
    const transport = await createEmbeddedTransport({ path: join(dir, 'log.sqlite'), pollIntervalMs: 50 });
    cleanups.push(() => transport.close());
    const outbox = new Outbox({ store: producer });
    const relay = new OutboxRelay({
      store: producer,
      publisher: transport,
      outbox,
      pollIntervalMs: 100,
      logger: silentLogger,
    });
    await relay.start();
    cleanups.push(() => relay.stop());

    const group = uniqueName('billing');
    const failing = new Set<string>();
    const handled: string[] = [];
    const consumer = new Consumer({
      group,
      store,
      transport,
      batchSize: 1,
      deadLetters: { scheduleMs: [3_600_000], maxAttempts: 1 },
      retention: false,
    }).on('order.created', async (order: { key: string }) => {
      if (failing.has(order.key)) throw new Error(`payment provider declined order ${order.key}`);
      handled.push(order.key);
    });
    await consumer.start();
    cleanups.push(() => consumer.stop());
    const replay = new ReplayJob(consumer, { intervalMs: 100 });
    replay.start();
    cleanups.push(() => replay.stop());

    const operatorToken = `op-${uniqueName('token')}`;
    const viewerToken = `view-${uniqueName('token')}`;
    const server: AdminServer = await startAdminServer({
      ...admin,
      host: '127.0.0.1',
      port: 0,
      tokens: [
        { name: 'alice', role: 'operator', token: operatorToken },
        { name: 'victor', role: 'viewer', token: viewerToken },
      ],
      doctor: () => runDoctor({ store }),
      allowEdit,
    });
    cleanups.push(() => server.close());

    return {
      url: `${server.url}/`,
      operatorToken,
      viewerToken,
      group,
      store,
      failing,
      handled,
      async order(key: string) {
        let id = '';
        await outbox.transaction(async (tx) => {
          id = (await outbox.add(tx, { type: 'order.created', key, payload: { key } })).messageId;
        });
        return id;
      },
      async deadLetter(messageId: string, status: DeadLetterRow['status']) {
        let row: DeadLetterRow | undefined;
        await waitFor(`dead letter of ${messageId} to be ${status}`, async () => {
          row = await store.deadLetters.getDeadLetter(messageId, group);
          return row?.status === status;
        });
        return row!;
      },
      close,
    } satisfies ConsoleApp;
  } catch (error) {
    await close();
    throw error;
  }
}
