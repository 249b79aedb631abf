import { runOutboxStoreConformance } from '../conformance/outbox-store-suite.js';
import { makePostgresFixture } from './fixtures.js';

runOutboxStoreConformance('postgres', () => makePostgresFixture());
