import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { testEnv } from '../support/env.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';
import { effectsConsumer } from './fixtures/redis-consumer-app.js';
import { envelopes } from './fixtures/redis-envelopes.js';
import { useRedisTestbed } from './fixtures/redis-testbed.js';

describe('redis: a dead consumer’s pending entries', () => {
  const bed = useRedisTestbed('claims');

  it('are claimed by a live consumer (XAUTOCLAIM) after the first is SIGKILLed, and each has its effect once', async () => {
    const [group, topic] = ['billing', 'order.created'];
    const { prefix, admin } = bed;
    const stream = `${prefix}${topic}`;
    const child = spawnTs('transports/fixtures/redis-consumer.ts', {
      SURETY_REDIS_URL: testEnv.redisUrl,
      SURETY_PREFIX: prefix,
      SURETY_GROUP: group,
      SURETY_TOPIC: topic,
      SURETY_CONSUMER: 'doomed',
    });
    const done = exited(child);
    const held: string[] = [];
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('held ')) held.push(line.slice(5));
    });
    try {
      const publisher = await bed.open();
      await waitFor('the child to create its group', async () => (await admin.exists(stream)) === 1, 30_000);
      const messages = envelopes(topic, 20);
      await Promise.all(messages.map((message) => publisher.publish({ topic, message })));
      await waitFor('the child to hold all 20', () => held.length === 20, 30_000);
      expect(new Set(held)).toEqual(new Set(messages.map((m) => m.id)));
    } finally {
      child.kill('SIGKILL');
    }
    expect(await done).toMatchObject({ signal: 'SIGKILL' });
    const [pending, , , perConsumer] = (await admin.xpending(stream, group)) as [number, string, string, string[][]];
    expect(pending).toBe(20);
    expect(perConsumer).toEqual([['doomed', '20']]);

    const survivor = await bed.open({ consumerName: 'survivor', claimIdleMs: 500 });
    const app = await effectsConsumer(survivor, group, topic);
    try {
      await app.consumer.start();
      await waitFor('all 20 effects', async () => (await app.effects()).length >= 20, 30_000);
      await waitFor('nothing pending', async () => ((await admin.xpending(stream, group)) as [number])[0] === 0);
      // Twice claimIdleMs more: nothing may be claimed or handled again.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await app.effects()).toEqual(Array.from({ length: 20 }, (_, n) => n));
      expect(await app.deadLetters()).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
