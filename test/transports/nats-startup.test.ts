import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DriverMissingError } from '../../src/core/errors.js';
import { loadNats } from '../../src/transports/nats/driver.js';
import { createNatsTransport, type NatsTransport } from '../../src/transports/nats/index.js';
import { DeliveryLog, testMessage } from '../conformance/transport-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { NatsAdmin } from './fixtures/nats-admin.js';
import { NatsProxy } from './fixtures/nats-proxy.js';

/** A loopback port nothing listens on (until a test starts something there). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('NATS transport start-up and topology', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const track = (t: NatsTransport): NatsTransport => (cleanups.push(() => t.close()), t);

  it('connects once the server comes up, and close() ends the waiting when it never does', async () => {
    const port = await freePort();
    const t = track(await createNatsTransport({ url: `nats://127.0.0.1:${port}`, reconnectWaitMs: 50, logger: null }));
    expect(await t.waitUntilReady(300)).toBe(false);
    const proxy = await NatsProxy.start(testEnv.natsUrl, port);
    cleanups.push(() => proxy.close());
    expect(await t.waitUntilReady(10_000)).toBe(true);

    const never = await createNatsTransport({ url: `nats://127.0.0.1:${await freePort()}`, logger: null });
    const started = Date.now();
    await never.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await never.waitUntilReady(0)).toBe(false);
  });

  it('rejects subscribe with SURETY_CONNECTION_LOST after startTimeoutMs without a server', async () => {
    const t = track(
      await createNatsTransport({ url: `nats://127.0.0.1:${await freePort()}`, startTimeoutMs: 200, logger: null }),
    );
    await expect(t.subscribe({ group: 'g1', topics: ['x'] }, async () => {})).rejects.toMatchObject({
      code: 'SURETY_CONNECTION_LOST',
    });
  });

  it('declares its streams on connect: file storage, replicas and duplicate window as given', async () => {
    const name = uniqueName('declared');
    const admin = await NatsAdmin.open();
    cleanups.push(
      () => admin.jsm.streams.delete(name).catch(() => false),
      () => admin.close(),
    );
    const t = track(
      await createNatsTransport({
        url: testEnv.natsUrl,
        logger: null,
        topology: { streams: [{ name, subjects: [`${name}.>`], duplicateWindowMs: 5_000 }] },
      }),
    );
    expect(await t.waitUntilReady(10_000)).toBe(true);
    const { config } = await admin.jsm.streams.info(name);
    expect(config).toMatchObject({
      subjects: [`${name}.>`],
      storage: 'file',
      num_replicas: 1,
      duplicate_window: 5_000 * 1_000_000,
    });
    const log = new DeliveryLog();
    await t.subscribe({ group: 'g1', topics: [`${name}.order.created`] }, log.handler);
    const sent = testMessage('declared');
    await t.publish({ topic: `${name}.order.created`, message: sent });
    await log.until('the message', (l) => l.countOf(sent.id) === 1);
  });

  it('rejects a subscription to a topic no stream stores, naming the subject and the option', async () => {
    const t = track(await createNatsTransport({ url: testEnv.natsUrl, logger: null }));
    const topic = uniqueName('nostream');
    await expect(t.subscribe({ group: 'g1', topics: [topic] }, async () => {})).rejects.toMatchObject({
      code: 'SURETY_INVALID_OPTION',
      message: expect.stringMatching(new RegExp(`${topic}.*topology\\.streams`)),
    });
  });

  it('refuses to read another topic through a group consumer made for one, instead of mixing them', async () => {
    const name = uniqueName('filters');
    const admin = await NatsAdmin.open();
    cleanups.push(
      () => admin.jsm.streams.delete(name).catch(() => false),
      () => admin.close(),
    );
    await admin.jsm.streams.add({ name, subjects: [`${name}.>`] });
    const t = track(await createNatsTransport({ url: testEnv.natsUrl, logger: null }));
    const first = await t.subscribe({ group: 'g1', topics: [`${name}.a`] }, async (d) => d.ack());
    await first.close();
    await expect(t.subscribe({ group: 'g1', topics: [`${name}.b`] }, async (d) => d.ack())).rejects.toMatchObject({
      code: 'SURETY_INVALID_OPTION',
      message: expect.stringContaining(`the consumer "g1" of stream "${name}" reads ${name}.a, not ${name}.b`),
    });
  });

  it('says which packages to install when the NATS client is missing', async () => {
    const missing = Object.assign(new Error('Cannot find package'), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(loadNats(() => Promise.reject(missing))).rejects.toBeInstanceOf(DriverMissingError);
    await expect(loadNats(() => Promise.reject(missing))).rejects.toMatchObject({
      code: 'SURETY_DRIVER_MISSING',
      message: expect.stringContaining('@nats-io/jetstream'),
    });
  });
});
