/** How publishes fail on Kafka: each refusal and fault mapped to its PublishError code. */
import { afterEach, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { createKafkaTransport, type KafkaTransport } from '../../src/transports/kafka/index.js';
import { testMessage } from '../conformance/transport-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { createTestTopic, deleteTestTopics, kafkaAdmin } from '../support/kafka-admin.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

describe('kafka publish failures', () => {
  const opened: KafkaTransport[] = [];
  const topics: string[] = [];

  afterEach(async () => {
    await Promise.allSettled(opened.splice(0).map((t) => t.close()));
    const admin = kafkaAdmin();
    await deleteTestTopics(admin, topics.splice(0));
    await admin.close();
  });

  async function open(brokers: string[], extra: Record<string, unknown> = {}): Promise<KafkaTransport> {
    const transport = await createKafkaTransport({ brokers, logger: silentLogger, ...extra });
    opened.push(transport);
    return transport;
  }

  it('a record larger than the broker accepts is SURETY_PUBLISH_UNROUTABLE, and a refused record fails alone, never its neighbours', async () => {
    const topic = uniqueName('too_large');
    topics.push(topic);
    const admin = kafkaAdmin();
    await createTestTopic(admin, topic);
    await admin.close();
    const transport = await open(testEnv.kafkaBrokers);
    const huge = { ...testMessage('huge'), body: Buffer.alloc(2 * 1024 * 1024, 0x61) };
    await expect(transport.publish({ topic, message: huge })).rejects.toMatchObject({
      name: 'PublishError',
      code: 'SURETY_PUBLISH_UNROUTABLE',
    });
    // Queued behind a request in flight, so that they share the next produce request: only the
    // record to a topic that does not exist fails, not its neighbours.
    const inFlight = transport.publish({ topic, message: testMessage('first') });
    const [, refused, ...neighbours] = await Promise.allSettled([
      inFlight,
      transport.publish({ topic: uniqueName('missing'), message: testMessage('lost') }),
      ...Array.from({ length: 5 }, (_, i) => transport.publish({ topic, message: testMessage(`small${i}`) })),
    ]);
    expect(refused).toMatchObject({ status: 'rejected', reason: { code: 'SURETY_PUBLISH_UNROUTABLE' } });
    expect(neighbours.map((n) => n.status)).toEqual(Array(5).fill('fulfilled'));
    await expect(transport.publish({ topic, message: testMessage('later') })).resolves.toBeUndefined();
  });

  it('with the broker unreachable the transport is not ready, and a publish rejects without claiming success', async () => {
    // A proxy that is closed at once: its port refuses connections.
    const proxy = await startTcpProxy(1);
    await proxy.close();
    const transport = await open([`127.0.0.1:${proxy.port}`], {
      publishTimeoutMs: 2_000,
      connectTimeoutMs: 500,
      startTimeoutMs: 1_000,
    });
    expect(await transport.waitUntilReady(1_000)).toBe(false);
    expect(transport.isReady()).toBe(false);
    const err = await transport.publish({ topic: 'any', message: testMessage('lost') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PublishError);
    expect(['SURETY_CONNECTION_LOST', 'SURETY_PUBLISH_TIMEOUT']).toContain((err as PublishError).code);
    // subscribe waits for a first connection, up to startTimeoutMs, then says why it gave up.
    await expect(transport.subscribe({ group: 'g', topics: ['any'] }, async () => {})).rejects.toMatchObject({
      code: 'SURETY_CONNECTION_LOST',
    });
  });
});
