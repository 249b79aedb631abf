export { runTransportConformance } from './transport-suite.js';
export { runBrokerFaultConformance } from './broker-fault-suite.js';
export { DeliveryLog, type Behaviour } from './delivery-log.js';
export { testMessage } from './test-message.js';
export type { TransportFixture, TransportCapabilities, BrokerFaultFixture } from './fixture.js';
export type { TestRunner } from './runner.js';
