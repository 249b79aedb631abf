/** NATS JetStream transport: deduplicated confirmed publishing, durable pull consumers, topology. */
export { createNatsTransport, type NatsTransport } from './transport.js';
export type { NatsTransportOptions } from './options.js';
export { declareTopology, type NatsTopology, type StreamSpec } from './topology.js';
export { maxDeliveriesSubject } from './exhausted-advisory.js';
export { createNatsQueueProbe, type NatsQueueProbeOptions } from './queue-probe.js';
