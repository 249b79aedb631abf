import type { Transport } from '../../../src/ports/transport.js';

/**
 * One broker as the end-to-end and chaos tests drive it, whatever it is. Each broker has a file
 * `test/support/brokers/<name>.ts` whose default export implements this; child processes find it by
 * the name in SURETY_BROKER, so a relay or consumer process opens the same transport as the test.
 * `ns` isolates one test: an exchange, a stream or subject prefix, a topic prefix.
 */
export interface BrokerUnderTest {
  readonly name: string;
  /** A transport for the namespace `ns`, ready to publish (its connection open). */
  open(ns: string): Promise<Transport>;
  /** Makes `topic` deliverable to `group` within `ns` (declare and bind a queue, create a stream and its group...). */
  prepare(ns: string, topic: string, group: string): Promise<void>;
  /** Cuts every client connection of `ns` from the broker's side, as a network fault or a broker failover would. */
  cutConnections(ns: string): Promise<void>;
  /** Deletes what `ns` created on the broker. Tolerates a namespace half made. */
  cleanup(ns: string): Promise<void>;
}

/** The broker a child process was told to use (SURETY_BROKER), loaded by name. */
export async function brokerFromEnv(): Promise<BrokerUnderTest> {
  const name = process.env.SURETY_BROKER ?? 'rabbitmq';
  if (!/^[a-z-]+$/.test(name)) throw new Error(`SURETY_BROKER ${JSON.stringify(name)} is not a broker name`);
  const mod = (await import(`./${name}.js`)) as { default: BrokerUnderTest };
  return mod.default;
}
