/**
 * Embedded transport: a durable log in SQLite with consumer groups and checkpoints, for running a
 * whole pipeline on one machine (the demo, tests, small deployments). Needs the optional peer
 * dependency better-sqlite3.
 */
export { createEmbeddedTransport, type EmbeddedTransport } from './embedded-transport.js';
export { createEmbeddedQueueProbe, type EmbeddedQueueProbeOptions } from './queue-probe.js';
export { embeddedQueueName } from './probe-queue-name.js';
export type { EmbeddedDelivery } from './delivery.js';
export type { EmbeddedTransportOptions } from './options.js';
export type { SqliteDatabase } from './driver.js';
export type { LogTables } from './sql.js';
