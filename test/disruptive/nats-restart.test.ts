/** Stops the shared NATS server: runs alone (see vitest.disruptive.config.ts), never beside other tests. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { createNatsTransport } from '../../src/transports/nats/index.js';
import { connect } from '@nats-io/transport-node';
import { DeliveryLog, runBrokerFaultConformance, testMessage } from '../conformance/transport-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';
import { NatsAdmin } from '../transports/fixtures/nats-admin.js';

const run = promisify(execFile);
const DAEMON = '/usr/sbin/nats-server';

async function stopNats(): Promise<void> {
  await run('start-stop-daemon', ['--stop', '--oknodo', '--retry', '30', '--exec', DAEMON], { timeout: 60_000 });
}

/** Starts it as ensure-services does, with the same command. */
async function startNats(): Promise<void> {
  const modulePath = '../../scripts/services/nats.mjs';
  const { nats } = (await import(modulePath)) as {
    nats(): { start?: { file: string; args: string[] } };
  };
  const start = nats().start;
  if (!start) throw new Error('cannot start nats-server here');
  await run(start.file, start.args, { timeout: 60_000 });
}

/** True once the server accepts a client connection. */
async function probeNats(): Promise<boolean> {
  try {
    const nc = await connect({ servers: testEnv.natsUrl, reconnect: false, timeout: 1_000 });
    await nc.close();
    return true;
  } catch {
    return false;
  }
}

afterAll(async () => {
  await startNats(); // never leave the server down for the next test
});

it('reconnects after the server restarts, publishes and consumes again, and loses nothing acknowledged', async () => {
  const topic = uniqueName('restart');
  const admin = await NatsAdmin.open(); // deletes the stream when closed, after the restart
  await admin.stream(topic);
  const transport = await createNatsTransport({ url: testEnv.natsUrl, reconnectWaitMs: 100, logger: null });
  expect(await transport.waitUntilReady(10_000)).toBe(true);

  // Half of what is published before the stop is consumed, the other half waits in the stream.
  let consuming = true;
  const log = new DeliveryLog((d) => (consuming ? d.ack() : Promise.resolve()));
  const subscription = await transport.subscribe({ group: 'g1', topics: [topic], prefetch: 50 }, log.handler);
  const first = Array.from({ length: 200 }, (_, i) => testMessage(`first${i}`));
  await Promise.all(first.map((message) => transport.publish({ topic, message })));
  await log.until('the first batch', (l) => l.uniqueIds().size === first.length);
  await subscription.close();
  consuming = false;
  const waiting = Array.from({ length: 200 }, (_, i) => testMessage(`waiting${i}`));
  await Promise.all(waiting.map((message) => transport.publish({ topic, message })));

  await stopNats();
  await waitFor('the transport to see the server gone', () => !transport.isReady(), 10_000, 10);
  await expect(transport.publish({ topic, message: testMessage('down') })).rejects.toMatchObject({
    code: 'SURETY_CONNECTION_LOST',
  });
  await startNats();
  expect(await transport.waitUntilReady(30_000)).toBe(true);

  const log2 = new DeliveryLog();
  await transport.subscribe({ group: 'g1', topics: [topic] }, log2.handler);
  const after = Array.from({ length: 200 }, (_, i) => testMessage(`after${i}`));
  await Promise.all(after.map((message) => transport.publish({ topic, message })));
  const expected = new Set([...waiting, ...after].map((m) => m.id));
  await log2.until(
    'every message stored before and after the restart',
    (l) => l.uniqueIds().size >= expected.size,
    60_000,
  );
  expect(log2.uniqueIds()).toEqual(expected); // nothing acked before the stop comes back, nothing stored is lost

  await transport.close();
  await admin.close();
});

runBrokerFaultConformance('nats', async () => {
  const admin = await NatsAdmin.open();
  const transport = await createNatsTransport({ url: testEnv.natsUrl, reconnectWaitMs: 100, logger: null });
  if (!(await transport.waitUntilReady(10_000))) throw new Error('NATS transport not ready');
  const prepared = new Set<string>();
  return {
    transport,
    uniqueTopic: (label) => uniqueName(label),
    prepareTopic: async (topic) => {
      if (prepared.has(topic)) return;
      prepared.add(topic);
      await admin.stream(topic);
    },
    stopBroker: stopNats,
    startBroker: async () => {
      await startNats();
      await waitFor('NATS to answer', () => probeNats(), 30_000, 100);
    },
    teardown: async () => {
      await transport.close();
      await admin.close();
    },
  };
});
