/** The shipped transport suite bound to Vitest, as an adapter's own tests use it. */
import { afterEach, beforeEach, describe, it } from 'vitest';
import {
  runBrokerFaultConformance as runFaults,
  runTransportConformance as run,
  type BrokerFaultFixture,
  type TransportCapabilities,
  type TransportFixture,
} from 'surety/testing';

export { DeliveryLog, testMessage, type TransportFixture } from 'surety/testing';

const vitest = { describe, it, beforeEach, afterEach };

export function runTransportConformance(
  name: string,
  factory: () => Promise<TransportFixture>,
  capabilities: TransportCapabilities,
): void {
  run(name, factory, capabilities, vitest);
}

export function runBrokerFaultConformance(name: string, factory: () => Promise<BrokerFaultFixture>): void {
  runFaults(name, factory, vitest);
}
