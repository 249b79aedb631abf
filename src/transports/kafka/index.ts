/** Kafka transport: idempotent acks=all publishing, hand-committed offsets, topic topology, lag probe. */
export { createKafkaTransport, type KafkaTransport } from './transport.js';
export type { KafkaTransportOptions } from './options.js';
export { declareTopics, type KafkaTopology, type TopicSpec } from './topology.js';
export {
  createKafkaQueueProbe,
  type KafkaQueueProbe,
  type KafkaQueueProbeOptions,
  type PartitionLag,
} from './queue-probe.js';
export type { SettingRisk } from './settings-risks.js';
