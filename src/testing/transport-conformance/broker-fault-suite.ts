import assert from 'node:assert/strict';
import { DeliveryLog } from './delivery-log.js';
import type { BrokerFaultFixture } from './fixture.js';
import { resolveRunner, type TestRunner } from './runner.js';
import { testMessage } from './test-message.js';

const READY_MS = 90_000;

/**
 * What a transport must survive when its broker stops for real: a restart under a live
 * subscription, and a broker killed while publishes are in flight. These stop a shared server, so
 * run them apart from other tests (Surety runs them in its disruptive suite, one file at a time).
 * @example
 * runBrokerFaultConformance('my-broker', async () => ({ ...fixture, stopBroker, startBroker }), { describe, it, beforeEach, afterEach });
 */
export function runBrokerFaultConformance(
  name: string,
  factory: () => Promise<BrokerFaultFixture>,
  runner?: TestRunner,
): void {
  const { describe, it, beforeEach, afterEach } = resolveRunner(runner);

  describe(`broker faults: ${name}`, () => {
    let fx: BrokerFaultFixture;
    let stopped = false;

    beforeEach(async () => {
      fx = await factory();
      stopped = false;
    });

    afterEach(async () => {
      if (stopped) await fx.startBroker();
      await fx.teardown();
    });

    async function restart(onStopped: () => void = () => {}): Promise<void> {
      stopped = true;
      await fx.stopBroker();
      onStopped();
      await fx.startBroker();
      stopped = false;
    }

    it('resumes a live subscription and publishing after the broker restarts, keeping what it confirmed', async () => {
      const topic = fx.uniqueTopic('broker_restart');
      await fx.prepareTopic(topic, 'g1');
      const log = new DeliveryLog();
      const subscription = await fx.transport.subscribe({ group: 'g1', topics: [topic] }, log.handler);
      try {
        const before = testMessage('before');
        await fx.transport.publish({ topic, message: before });
        await log.until('the message before the restart', (l) => l.countOf(before.id) > 0);
        // Confirmed while nobody was subscribed to take it: it must outlive the broker's restart.
        await subscription.close();
        const kept = testMessage('kept');
        await fx.transport.publish({ topic, message: kept });

        await restart();
        assert.equal(await fx.transport.waitUntilReady(READY_MS), true, 'the transport did not reconnect');
        const resumed = await fx.transport.subscribe({ group: 'g1', topics: [topic] }, log.handler);
        try {
          const after = testMessage('after');
          await fx.transport.publish({ topic, message: after });
          await log.until(
            'the kept message and the one after',
            (l) => l.countOf(kept.id) > 0 && l.countOf(after.id) > 0,
            READY_MS,
          );
        } finally {
          await resumed.close();
        }
      } finally {
        await subscription.close();
      }
    });

    it('loses no confirmed publish when the broker stops while publishes are in flight', async () => {
      const topic = fx.uniqueTopic('broker_kill');
      await fx.prepareTopic(topic, 'g1');
      const confirmed = new Set<string>();
      let [started, caught] = [0, 0];
      let phase: 'up' | 'stopping' | 'down' = 'up';
      let firstConfirms!: () => void;
      const enough = new Promise<void>((resolve) => (firstConfirms = resolve));
      // A relay's shape: a window of publishes in flight, paused while the transport is not ready,
      // until the broker has stopped.
      const lane = async (): Promise<void> => {
        while (phase !== 'down' && started < 50_000) {
          if (!fx.transport.isReady()) {
            await fx.transport.waitUntilReady(100);
            continue;
          }
          const message = testMessage(`m${started++}`);
          const startedUp = phase === 'up';
          try {
            await fx.transport.publish({ topic, message });
            confirmed.add(message.id);
            if (confirmed.size === 100) firstConfirms();
            if (startedUp && phase !== 'up') caught++;
          } catch {
            if (startedUp) caught++;
          }
        }
      };
      const lanes = Promise.all(Array.from({ length: 50 }, lane));
      await enough;
      phase = 'stopping';
      await restart(() => (phase = 'down'));
      await lanes;
      assert.ok(caught > 0, 'no publish was in flight when the broker stopped');

      assert.equal(await fx.transport.waitUntilReady(READY_MS), true, 'the transport did not reconnect');
      const log = new DeliveryLog();
      const subscription = await fx.transport.subscribe({ group: 'g1', topics: [topic], prefetch: 200 }, log.handler);
      try {
        await log.until(
          `all ${confirmed.size} confirmed messages`,
          (l) => [...confirmed].every((id) => l.countOf(id) > 0),
          READY_MS,
        );
      } finally {
        await subscription.close();
      }
    });
  });
}
