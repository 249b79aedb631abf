import type { Transport } from '../../ports/transport.js';

/** What a transport adapter gives the suite before each test. */
export interface TransportFixture {
  readonly transport: Transport;
  uniqueTopic(label: string): string;
  /** Makes `topic` deliverable to `group` (declare and bind a queue, create a stream...). */
  prepareTopic(topic: string, group: string): Promise<void>;
  /** A second transport on the same broker or file, as after a process restart. Needed when `persistent`. */
  openAnother?(): Promise<Transport>;
  /**
   * Drops every connection of this fixture's transports as a crashed process or a network fault
   * would, without closing them (the broker closes them, or a proxy between drops its sockets).
   * Needed when `connectionCut`.
   */
  cutConnections?(): Promise<void>;
  /** Runs after each test; must tolerate a transport the test already closed. */
  teardown(): Promise<void>;
}

/** What the broker offers; tests of what it lacks are not registered. */
export interface TransportCapabilities {
  /** Publishing to a topic no group is bound to rejects with SURETY_PUBLISH_UNROUTABLE. */
  readonly unroutableDetection: boolean;
  /** Messages and settled positions survive closing the transport and opening another. */
  readonly persistent: boolean;
  /** `Delivery.redeliveries` counts earlier deliveries (1 on the first redelivery). */
  readonly redeliveryCount: boolean;
  /** Settlement is a committed offset: an ack never commits past an earlier unsettled message. */
  readonly checkpoint: boolean;
  /** One subscriber gets a topic's messages, on first delivery, in publish order. */
  readonly orderedPerTopic: boolean;
  /**
   * One subscriber gets the messages of one ordering key (the `surety-ordering-key` header) in
   * publish order, even where the topic as a whole is not ordered (Kafka partitions). Defaults to
   * `orderedPerTopic`.
   */
  readonly orderedPerKey?: boolean;
  /** The fixture can cut its connections (`cutConnections`): unsettled messages must come back with their ids. */
  readonly connectionCut?: boolean;
}

/** What the broker-fault suite drives: the broker itself, stopped and started for real. */
export interface BrokerFaultFixture extends TransportFixture {
  /** Stops the broker abruptly (its connections drop, its port refuses). */
  stopBroker(): Promise<void>;
  /** Starts it again and resolves once it answers. */
  startBroker(): Promise<void>;
}
