import { describe, expect, it } from 'vitest';
import { createNatsQueueProbe, createNatsTransport, declareTopology } from '../../src/transports/nats/index.js';
import { resolveOptions, type NatsTransportOptions } from '../../src/transports/nats/options.js';
import type { JetStreamManager } from '../../src/transports/nats/driver.js';
import { optionError as thrown } from '../support/option-error.js';

const url = 'nats://127.0.0.1:4222';
const optionError = (options: unknown) => thrown(() => resolveOptions(options as NatsTransportOptions));

/** A manager that fails the test if anything is declared through it. */
const untouched = new Proxy({} as JetStreamManager, {
  get: () => {
    throw new Error('declared despite a bad topology');
  },
});

describe('nats options, parsed once like the core components', () => {
  it('say which option is wrong and what is allowed', () => {
    expect(optionError({ url, ackWaitMs: 50 })).toMatchObject({
      code: 'SURETY_INVALID_OPTION',
      option: 'ackWaitMs',
      detail: 'must be an integer from 100 to 2147483647',
    });
    expect(optionError({ url, maxDeliver: 1 })).toMatchObject({
      option: 'maxDeliver',
      detail: 'must be an integer from 2 to 1000000',
    });
    expect(optionError({ url, prefetch: 0 })).toMatchObject({ option: 'prefetch' });
    expect(optionError({ url, publishTimeoutMs: '10s' })).toMatchObject({ option: 'publishTimeoutMs' });
    expect(optionError({ url, subjectPrefix: 'orders.*' })).toMatchObject({
      option: 'subjectPrefix',
      detail: 'must be a subject without spaces or wildcards',
    });
    expect(optionError({ url, consumerForGroup: 'billing' })).toMatchObject({
      option: 'consumerForGroup',
      detail: 'must be a function',
    });
    expect(optionError({ url: 'http://x' })).toMatchObject({ option: 'url' });
    expect(optionError({ url: [] })).toMatchObject({ option: 'url' });
    expect(optionError('nats://x')).toMatchObject({
      option: 'options',
      detail: 'must be an object with at least "url"',
    });
  });

  it('name the entry of a topology list', () => {
    expect(optionError({ url, topology: { streams: [{ name: 'orders.v1', subjects: ['o'] }] } })).toMatchObject({
      option: 'topology.streams[0].name',
      detail: 'must be a stream name without spaces, ".", "*" or ">"',
    });
    expect(optionError({ url, topology: { streams: [{ name: 'orders', subjects: [] }] } })).toMatchObject({
      option: 'topology.streams[0].subjects',
    });
    expect(
      optionError({ url, topology: { streams: [{ name: 'orders', subjects: ['o'], numReplicas: 7 }] } }),
    ).toMatchObject({ option: 'topology.streams[0].numReplicas', detail: 'must be an integer from 1 to 5' });
  });

  it('resolve defaults: topic as subject, group as durable consumer, one replica', () => {
    const o = resolveOptions({ url, topology: { streams: [{ name: 'orders', subjects: ['order.>'] }] } });
    expect(o).toMatchObject({ servers: [url], ackWaitMs: 30_000, maxDeliver: 20, prefetch: 100, retryDelayMs: 0 });
    expect(o.subject('order.created')).toBe('order.created');
    expect(resolveOptions({ url, subjectPrefix: 'shop' }).subject('order.created')).toBe('shop.order.created');
    expect(o.consumerForGroup('billing.eu west')).toBe('billing_eu_west');
    expect(o.topology.streams[0]).toEqual({
      name: 'orders',
      subjects: ['order.>'],
      numReplicas: 1,
      duplicateWindowMs: 120_000,
      maxAgeMs: 0,
    });
    expect(Object.isFrozen(o)).toBe(true);
  });

  it('reject at construction, before connecting, and in declareTopology and the probe', async () => {
    await expect(createNatsTransport({ url, maxDeliver: 0 })).rejects.toMatchObject({ option: 'maxDeliver' });
    await expect(declareTopology(untouched, { streams: [{ name: '', subjects: ['x'] }] })).rejects.toMatchObject({
      option: 'topology.streams[0].name',
    });
    expect(thrown(() => createNatsQueueProbe({ url, timeoutMs: 0 }))).toMatchObject({ option: 'timeoutMs' });
  });
});
