import { describe, expect, it } from 'vitest';
import { createKafkaQueueProbe, createKafkaTransport } from '../../src/transports/kafka/index.js';
import { loadKafkaClient } from '../../src/transports/kafka/driver.js';
import { resolveOptions, type KafkaTransportOptions } from '../../src/transports/kafka/options.js';
import { testEnv } from '../support/env.js';
import { optionError as thrown } from '../support/option-error.js';

const brokers = '127.0.0.1:9092';
const optionError = (options: unknown) => thrown(() => resolveOptions(options as KafkaTransportOptions));

describe('kafka options, parsed once like the core components', () => {
  it('say which option is wrong and what is allowed, with the core error class and code', () => {
    expect(optionError({ brokers, publishTimeoutMs: 0 })).toMatchObject({
      code: 'SURETY_INVALID_OPTION',
      option: 'publishTimeoutMs',
      detail: 'must be an integer from 1 to 2147483647',
    });
    expect(optionError({ brokers, sessionTimeoutMs: 1_000 })).toMatchObject({
      option: 'sessionTimeoutMs',
      detail: 'must be an integer from 6000 to 300000',
    });
    expect(optionError({ brokers, maxBatch: 0 }).option).toBe('maxBatch');
    expect(optionError({ brokers, clientId: '' })).toMatchObject({
      option: 'clientId',
      detail: 'must be a non-empty string',
    });
    expect(optionError({ brokers, topicName: 'x' })).toMatchObject({
      option: 'topicName',
      detail: 'must be a function',
    });
    expect(optionError('127.0.0.1:9092')).toMatchObject({
      option: 'options',
      detail: 'must be an object with at least "brokers"',
    });
  });

  it('name a bad broker address and accept host:port, kafka:// and lists', () => {
    expect(optionError({ brokers: 'localhost' })).toMatchObject({ option: 'brokers' });
    expect(optionError({ brokers: [] })).toMatchObject({ option: 'brokers' });
    expect(optionError({ brokers: ['a:1', 'nope'] }).option).toBe('brokers[1]');
    expect(resolveOptions({ brokers: 'kafka://h:9092' }).brokers).toEqual(['h:9092']);
    expect(resolveOptions({ brokers: ['a:1', 'b:2'] }).brokers).toEqual(['a:1', 'b:2']);
  });

  it('name the entry of the topology and refuse min.insync.replicas above the replication factor', () => {
    expect(optionError({ brokers, topology: { topics: [{ name: 't', partitions: 0 }] } })).toMatchObject({
      option: 'topology.topics[0].partitions',
    });
    expect(
      optionError({ brokers, topology: { topics: [{ name: 't', replicationFactor: 1, minInsyncReplicas: 2 }] } }),
    ).toMatchObject({ option: 'topology.topics[0].minInsyncReplicas' });
    const topic = resolveOptions({
      brokers,
      topology: { topics: [{ name: 't', partitions: 6, replicationFactor: 3, minInsyncReplicas: 2 }] },
    }).topology.topics[0];
    expect(topic).toEqual({ name: 't', partitions: 6, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
  });

  it('are checked before the client is loaded or a connection opened', async () => {
    await expect(createKafkaTransport({ brokers: 'no-port' })).rejects.toMatchObject({ option: 'brokers' });
    await expect(createKafkaQueueProbe({ brokers, timeoutMs: -1 })).rejects.toMatchObject({ option: 'timeoutMs' });
  });

  it('a missing client is a DriverMissingError naming the package', async () => {
    const missing = Object.assign(new Error('not found'), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(loadKafkaClient(() => Promise.reject(missing))).rejects.toMatchObject({
      code: 'SURETY_DRIVER_MISSING',
      message: expect.stringContaining('@platformatic/kafka'),
    });
  });

  it('subscribe options are validated too', async () => {
    const transport = await createKafkaTransport({ brokers: testEnv.kafkaBrokers, logger: null });
    try {
      await expect(transport.subscribe({ group: '', topics: ['t'] }, async () => {})).rejects.toMatchObject({
        option: 'group',
      });
      await expect(transport.subscribe({ group: 'g', topics: [] }, async () => {})).rejects.toMatchObject({
        option: 'topics',
      });
    } finally {
      await transport.close();
    }
  });
});
