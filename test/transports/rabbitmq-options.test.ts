import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/core/errors.js';
import {
  createRabbitMqQueueProbe,
  createRabbitMqTransport,
  declareTopology,
  type AmqpTopologyChannel,
} from '../../src/transports/rabbitmq/index.js';
import { resolveOptions, type RabbitMqTransportOptions } from '../../src/transports/rabbitmq/options.js';
import { testEnv, uniqueName } from '../support/env.js';
import { optionError as thrown } from '../support/option-error.js';

const url = 'amqp://guest:guest@127.0.0.1:5672';
const optionError = (options: unknown) => thrown(() => resolveOptions(options as RabbitMqTransportOptions));

/** A channel that fails the test if anything is declared on it. */
const untouched = new Proxy({} as AmqpTopologyChannel, {
  get: () => () => Promise.reject(new Error('declared despite a bad topology')),
});

describe('rabbitmq options, parsed once like the core components', () => {
  it('say which option is wrong and what is allowed, with the core error class and code', () => {
    const err = optionError({ url, connectTimeoutMs: 0 });
    expect(err).toMatchObject({
      code: 'SURETY_INVALID_OPTION',
      option: 'connectTimeoutMs',
      detail: 'must be an integer from 1 to 2147483647',
    });
    expect(optionError({ url, closeTimeoutMs: '5s' }).detail).toBe('must be an integer from 0 to 2147483647');
    expect(optionError({ url, declareExchange: 'yes' })).toMatchObject({
      option: 'declareExchange',
      detail: 'must be true or false',
    });
    expect(optionError({ url, exchange: '' })).toMatchObject({
      option: 'exchange',
      detail: 'must be a non-empty string',
    });
    expect(optionError({ url, queueForGroup: 'billing' })).toMatchObject({
      option: 'queueForGroup',
      detail: 'must be a function',
    });
    expect(optionError({ url, reconnect: [100] })).toMatchObject({ option: 'reconnect', detail: 'must be an object' });
    expect(optionError('amqp://x')).toMatchObject({
      option: 'options',
      detail: 'must be an object with at least "url"',
    });
  });

  it('name the entry of a topology list', () => {
    expect(optionError({ url, topology: { exchanges: [{ name: 'e', type: 'x-delayed' }] } })).toMatchObject({
      option: 'topology.exchanges[0].type',
      detail: 'must be one of "topic", "direct", "fanout", "headers"',
    });
    expect(optionError({ url, topology: { queues: [{ name: 'a' }, { name: 'b', deliveryLimit: -1 }] } })).toMatchObject(
      {
        option: 'topology.queues[1].deliveryLimit',
        detail: 'must be an integer from 0 to 9007199254740991',
      },
    );
    expect(optionError({ url, topology: { bindings: [{ exchange: 'e', queue: 'q', pattern: 7 }] } })).toMatchObject({
      option: 'topology.bindings[0].pattern',
      detail: 'must be a string',
    });
    expect(optionError({ url, topology: { queues: {} } })).toMatchObject({
      option: 'topology.queues',
      detail: 'must be an array',
    });
  });

  it('resolve into a frozen object, topology included', () => {
    const o = resolveOptions({ url, topology: { queues: [{ name: 'billing' }], bindings: [] } });
    expect(Object.isFrozen(o)).toBe(true);
    expect(Object.isFrozen(o.topology)).toBe(true);
    expect(Object.isFrozen(o.topology.queues[0])).toBe(true);
  });

  it('refuses a bad topology given to declareTopology before declaring anything', async () => {
    const attempt = declareTopology(untouched, { queues: [{ name: 'q', overflow: 'drop-tail' as never }] });
    await expect(attempt).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(attempt).rejects.toMatchObject({ option: 'topology.queues[0].overflow' });
  });

  it('refuses bad subscribe options, naming them', async () => {
    const transport = await createRabbitMqTransport({ url: testEnv.amqpUrl, logger: null });
    try {
      const handle = async () => undefined;
      const group = uniqueName('opts');
      await expect(transport.subscribe({ group: '', topics: ['t'] }, handle)).rejects.toMatchObject({
        code: 'SURETY_INVALID_OPTION',
        option: 'group',
      });
      await expect(transport.subscribe({ group, topics: [] }, handle)).rejects.toMatchObject({ option: 'topics' });
      await expect(transport.subscribe({ group, topics: ['t', ''] }, handle)).rejects.toMatchObject({
        option: 'topics[1]',
        detail: 'must be a non-empty string',
      });
      await expect(transport.subscribe({ group, topics: ['t'], prefetch: 0 }, handle)).rejects.toMatchObject({
        option: 'prefetch',
        detail: 'must be an integer from 1 to 65535',
      });
    } finally {
      await transport.close();
    }
  });

  it('refuse bad queue probe options, naming them', () => {
    expect(thrown(() => createRabbitMqQueueProbe({ url, timeoutMs: 0 }))).toMatchObject({
      option: 'timeoutMs',
      detail: 'must be an integer from 1 to 2147483647',
    });
    expect(thrown(() => createRabbitMqQueueProbe({ url, managementUrl: ['http://a', 'ftp://b'] }))).toMatchObject({
      option: 'managementUrl[1]',
      detail: 'must start with "http://" or "https://"',
    });
  });
});
