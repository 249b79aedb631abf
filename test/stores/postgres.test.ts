import { runOutboxStoreConformance } from '../conformance/outbox-store-suite.js';
import { makePostgresFixture } from './fixtures.js';

runOutboxStoreConformance('postgres', () => makePostgresFixture());
// Statements issued at once are queued instead of pipelined on a plain pool.
runOutboxStoreConformance('postgres, plain pool', () => makePostgresFixture('pgplain', { pipeline: false }));
