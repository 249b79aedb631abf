import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// What each entry point of the package offers at run time. A name added to an entry point must be added here on
// purpose, so that an internal helper does not leak into the public API by an `export *`; one removed is a breaking
// change. (Type-only exports are not visible at run time; keep them to what the public options and results name.)
const PUBLIC: Record<string, readonly string[]> = {
  surety: [
    'CONTENT_TYPE',
    'Consumer',
    'DriverMissingError',
    'InvalidMessageError',
    'InvalidOptionError',
    'NotMigratedError',
    'Outbox',
    'OutboxRelay',
    'PermanentError',
    'PoisonMessageError',
    'PublishError',
    'ReplayJob',
    'RetryLaterError',
    'StoreError',
    'SuretyError',
    'TransactionAbortedError',
    'TransactionEndedError',
    'WIRE_HEADERS',
    'createEnvelope',
    'decodeEnvelope',
    'encodeEnvelope',
    'fetchBack',
    'newMessageId',
    'openOutboxStore',
    'openStore',
  ],
  'surety/postgres': ['createPostgresOutboxStore', 'createPostgresStore', 'pgCommit', 'pgExecutor', 'pgTransaction'],
  'surety/mysql': ['createMysqlOutboxStore', 'createMysqlStore', 'mysqlExecutor', 'mysqlTransaction'],
  'surety/sqlite': ['createSqliteOutboxStore', 'createSqliteStore', 'sqliteExecutor', 'sqliteTransaction'],
  'surety/rabbitmq': [
    'DEAD_LETTER_EXCHANGE',
    'QueueDeclarationRefusedError',
    'createRabbitMqQueueProbe',
    'createRabbitMqTransport',
    'declareTopology',
    'parkingQueueName',
  ],
  'surety/embedded': ['createEmbeddedQueueProbe', 'createEmbeddedTransport', 'embeddedQueueName'],
  'surety/admin': [
    'AdminError',
    'AdminService',
    'ConflictError',
    'ForbiddenError',
    'InvalidInputError',
    'JobRunner',
    'NotFoundError',
    'UnauthenticatedError',
    'createAdminApp',
    'hashToken',
    'mergeDoctorReports',
    'runDoctor',
    'startAdminServer',
  ],
  'surety/kafka': ['createKafkaQueueProbe', 'createKafkaTransport', 'declareTopics'],
  'surety/nats': ['createNatsQueueProbe', 'createNatsTransport', 'declareTopology', 'maxDeliveriesSubject'],
  'surety/redis': ['createRedisStreamProbe', 'createRedisStreamsTransport', 'redisQueueName'],
  'surety/testing': [
    'DeliveryLog',
    'ManualClock',
    'NotSettledError',
    'TestHarness',
    'createTestHarness',
    'runBrokerFaultConformance',
    'runTransportConformance',
    'testMessage',
  ],
  'surety/kysely': ['kyselyExecutor', 'kyselyStore', 'kyselyTransaction', 'kyselyTransactionOf'],
  'surety/knex': ['knexExecutor', 'knexStore', 'knexTransactionOf'],
  'surety/drizzle': ['drizzleExecutor', 'drizzleStore', 'drizzleTransaction', 'drizzleTransactionOf'],
  'surety/typeorm': ['typeormExecutor', 'typeormStore', 'typeormTransactionOf'],
  'surety/prisma': ['prismaExecutor', 'prismaStore', 'prismaTransaction', 'prismaTransactionOf'],
  'surety/mikro-orm': ['mikroOrmExecutor', 'mikroOrmStore', 'mikroOrmTransactionOf'],
  'surety/nestjs': [
    'SURETY_CONSUMERS',
    'SURETY_HANDLER_METADATA',
    'SURETY_OUTBOX',
    'SURETY_RELAY',
    'SURETY_REPLAY_JOBS',
    'SURETY_STORE',
    'SURETY_TRANSPORT',
    'SuretyHandler',
    'SuretyModule',
    'getConsumerToken',
    'getReplayJobToken',
  ],
};

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  name: string;
  exports: Record<string, string | { types: string; default: string }>;
};
const tsconfig = JSON.parse(readFileSync(new URL('tsconfig.json', root), 'utf8')) as {
  compilerOptions: { paths: Record<string, string[]> };
};

/** `surety/postgres` for `./postgres`, with the source file its built file comes from. */
const entryPoints = Object.entries(pkg.exports)
  .filter(([subpath]) => subpath !== './package.json')
  .map(([subpath, target]) => ({
    name: subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
    source: `./src/${(typeof target === 'string' ? target : target.default).slice('./dist/'.length).replace(/\.js$/, '.ts')}`,
  }));

describe('the public API', () => {
  it('has an allow-list for every entry point of package.json, and tsconfig maps each to its source', () => {
    expect(entryPoints.map((e) => e.name).sort()).toEqual(Object.keys(PUBLIC).sort());
    expect(tsconfig.compilerOptions.paths).toEqual(Object.fromEntries(entryPoints.map((e) => [e.name, [e.source]])));
  });

  for (const { name } of entryPoints) {
    it(`${name} exports exactly its allow-list`, async () => {
      const module = (await import(/* @vite-ignore */ name)) as Record<string, unknown>;
      expect(Object.keys(module).sort()).toEqual([...(PUBLIC[name] ?? [])].sort());
      for (const exported of Object.values(module)) expect(exported).toBeDefined();
    });
  }
});
