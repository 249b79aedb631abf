/** RabbitMQ transport: confirmed publishing, manual-ack consumption, topology, reconnection. */
export { createRabbitMqTransport, type RabbitMqTransport } from './transport.js';
export type { RabbitMqTransportOptions, RabbitMqRoute } from './options.js';
export {
  declareTopology,
  type Topology,
  type ExchangeSpec,
  type ExchangeType,
  type QueueSpec,
  type QueueType,
  type QueueOverflow,
  type BindingSpec,
} from './topology.js';
export { QueueDeclarationRefusedError } from './declare-refusal.js';
export { DEAD_LETTER_EXCHANGE, parkingQueueName } from './dead-letter-parking.js';
export type { QueueInspection } from './inspect-queue.js';
export type { AmqpTopologyChannel } from './driver.js';
export { createRabbitMqQueueProbe, type RabbitMqQueueProbeOptions } from './queue-probe.js';
