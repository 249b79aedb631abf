import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { configFolder, configProblem, runCli } from './cli-harness.js';

const { dir, file } = configFolder('surety-config-');

describe('config file and environment', () => {
  it('reads YAML with defaults, durations, and paths relative to the file', async () => {
    const path = file(
      'surety.yaml',
      `database:
  url: sqlite:app.db
transport:
  kind: embedded
  path: data/log.sqlite
  queues: [billing]
replayer:
  enabled: true
  module: ./consumers.js
  ratePerSecond: 20
console:
  enabled: true
  port: 0
  tokens:
    - { name: ops, role: operator, token: 0123456789abcdef-ops }
doctor:
  relayStaleMs: 2m
  failureWindowMs: 15m
`,
    );
    const { config, file: read } = await loadConfig({ file: path, env: {} });
    expect(read).toBe(path);
    expect(config).toMatchObject({
      database: { url: 'sqlite:app.db', tablePrefix: 'surety_' },
      transport: { kind: 'embedded', path: join(dir, 'data/log.sqlite'), queues: ['billing'], persistent: true },
      relay: { enabled: true },
      replayer: { enabled: true, module: join(dir, 'consumers.js'), ratePerSecond: 20 },
      console: {
        enabled: true,
        host: '127.0.0.1',
        port: 0,
        basePath: '/',
        allowEdit: false,
        inboxWindowMs: 604_800_000,
      },
      doctor: { retryStrategy: 'dead-letter-table', relayStaleMs: 120_000, failureWindowMs: 900_000 },
    });
  });

  it('reads JSON from SURETY_CONFIG; the environment overrides the file', async () => {
    const path = file(
      'surety.json',
      JSON.stringify({ database: { url: 'sqlite:a.db' }, transport: { kind: 'rabbitmq', url: 'amqp://localhost' } }),
    );
    const { config } = await loadConfig({
      env: {
        SURETY_CONFIG: path,
        SURETY_DATABASE_URL: 'postgres://u:p@db/app',
        SURETY_AMQP_URL: 'amqp://broker:5672',
        SURETY_QUEUES: 'billing, shipping',
        SURETY_CONSOLE_ENABLED: 'true',
        SURETY_CONSOLE_PORT: '9000',
        SURETY_TOKENS: `ops:operator:${'o'.repeat(20)},view:viewer:sha256=${'ab'.repeat(32)}`,
      },
    });
    expect(config.database?.url).toBe('postgres://u:p@db/app');
    expect(config.transport).toMatchObject({
      kind: 'rabbitmq',
      url: 'amqp://broker:5672',
      queues: ['billing', 'shipping'],
    });
    expect(config.console).toMatchObject({
      enabled: true,
      port: 9000,
      tokens: [
        { name: 'ops', role: 'operator', token: 'o'.repeat(20) },
        { name: 'view', role: 'viewer', sha256: 'ab'.repeat(32) },
      ],
    });
  });

  it('infers the transport kind from the environment alone', async () => {
    const { config } = await loadConfig({ env: { SURETY_DATABASE_URL: 'sqlite:x.db', SURETY_LOG_PATH: 'log.sqlite' } });
    expect(config.transport).toMatchObject({ kind: 'embedded', path: join(process.cwd(), 'log.sqlite') });
  });

  it('takes NATS from SURETY_NATS_URL or the file, and refuses what NATS does not read', async () => {
    const fromEnv = await loadConfig({
      env: { SURETY_DATABASE_URL: 'sqlite:x.db', SURETY_NATS_URL: 'nats://n-a:4222,nats://n-b:4222' },
    });
    expect(fromEnv.config.transport).toMatchObject({ kind: 'nats', url: ['nats://n-a:4222', 'nats://n-b:4222'] });
    const path = file(
      'nats.yaml',
      'database: { url: "sqlite:x.db" }\ntransport: { kind: nats, url: nats://n:4222, subjectPrefix: shop, ackWaitMs: 30s, maxDeliver: 5 }\n',
    );
    expect((await loadConfig({ file: path, env: {} })).config.transport).toMatchObject({
      kind: 'nats',
      subjectPrefix: 'shop',
      ackWaitMs: 30_000,
      maxDeliver: 5,
    });
    const bad = file(
      'nats-bad.yaml',
      'database: { url: "sqlite:x.db" }\ntransport: { kind: nats, url: "amqp://mq:5672", exchange: shop, maxDeliver: 1 }\n',
    );
    expect((await configProblem({ file: bad, env: {} })).split('\n')).toEqual([
      'config error at transport.maxDeliver: must be at least 2 (got 1)',
      'config error at transport.url: must start with nats:// or tls:// (got "amqp://mq:5672")',
      'config error at transport.exchange: is not used by kind "nats"',
    ]);
  });

  it('takes Redis from SURETY_REDIS_URL, with one trim at most', async () => {
    const fromEnv = await loadConfig({
      env: { SURETY_DATABASE_URL: 'sqlite:x.db', SURETY_REDIS_URL: 'redis://r:6379/2' },
    });
    expect(fromEnv.config.transport).toMatchObject({ kind: 'redis', url: 'redis://r:6379/2' });
    const bad = file(
      'redis-bad.yaml',
      'database: { url: "sqlite:x.db" }\ntransport: { kind: redis, url: [redis://a, redis://b], maxLen: 1000, maxAgeMs: 1h, subjectPrefix: x }\n',
    );
    expect((await configProblem({ file: bad, env: {} })).split('\n')).toEqual([
      'config error at transport.url: must be one redis:// URL (got a list)',
      'config error at transport.maxAgeMs: cannot be combined with "maxLen": choose one trim',
      'config error at transport.subjectPrefix: is not used by kind "redis"',
    ]);
  });

  it('takes Kafka from SURETY_KAFKA_BROKERS, and refuses a broker without a port', async () => {
    const fromEnv = await loadConfig({
      env: { SURETY_DATABASE_URL: 'sqlite:x.db', SURETY_KAFKA_BROKERS: 'k-a:9092, k-b:9092' },
    });
    expect(fromEnv.config.transport).toMatchObject({ kind: 'kafka', brokers: ['k-a:9092', 'k-b:9092'] });
    const bad = file(
      'kafka-bad.yaml',
      'database: { url: "sqlite:x.db" }\ntransport: { kind: kafka, brokers: [k-a], url: "amqp://x" }\n',
    );
    const problems = (await configProblem({ file: bad, env: {} })).split('\n');
    expect(problems).toContain('config error at transport.url: is not used by kind "kafka"');
    expect(problems.some((p) => p.startsWith('config error at transport.brokers'))).toBe(true);
    const none = file('kafka-none.yaml', 'database: { url: "sqlite:x.db" }\ntransport: { kind: kafka }\n');
    expect(await configProblem({ file: none, env: {} })).toBe(
      'config error at transport.brokers: is required for kind "kafka" (host:9092, or a list)',
    );
  });

  it('takes several RabbitMQ nodes: a list in the file, comma-separated in SURETY_AMQP_URL', async () => {
    const path = file(
      'cluster.yaml',
      `database: { url: "sqlite:x.db" }
transport:
  url: [amqp://app:pw@mq-a:5672/shop, amqp://app:pw@mq-b:5672/shop]
  managementUrl: [http://mq-a:15672, http://mq-b:15672]
`,
    );
    expect((await loadConfig({ file: path, env: {} })).config.transport).toMatchObject({
      kind: 'rabbitmq',
      url: ['amqp://app:pw@mq-a:5672/shop', 'amqp://app:pw@mq-b:5672/shop'],
      managementUrl: ['http://mq-a:15672', 'http://mq-b:15672'],
    });
    const env = {
      SURETY_DATABASE_URL: 'sqlite:x.db',
      SURETY_AMQP_URL: 'amqp://app:pw@mq-a:5672, amqp://app:pw@mq-b:5672',
      SURETY_AMQP_MANAGEMENT_URL: 'http://mq-a:15672,http://mq-b:15672',
    };
    expect((await loadConfig({ env })).config.transport).toMatchObject({
      url: ['amqp://app:pw@mq-a:5672', 'amqp://app:pw@mq-b:5672'],
      managementUrl: ['http://mq-a:15672', 'http://mq-b:15672'],
    });
    // A comma that no scheme follows belongs to the password.
    const oneNode = await loadConfig({ env: { ...env, SURETY_AMQP_URL: 'amqp://app:p,w@mq-a:5672' } });
    expect(oneNode.config.transport?.url).toBe('amqp://app:p,w@mq-a:5672');
  });

  it('refuses a comma-separated url in the file and a bad node, naming the entry', async () => {
    const joined = file(
      'joined.yaml',
      'database: { url: "sqlite:x.db" }\ntransport: { url: "amqp://a:5672,amqp://b:5672" }\n',
    );
    expect(await configProblem({ file: joined, env: {} })).toBe(
      'config error at transport.url: holds several URLs separated by commas: give one URL per node in a list, e.g. ["amqp://mq-a:5672", "amqp://mq-b:5672"]',
    );
    const env = (url: string) => ({ SURETY_DATABASE_URL: 'sqlite:x.db', SURETY_AMQP_URL: url });
    expect(await configProblem({ env: env('amqp://u:hunter2@a/shop,amqp://u:hunter2@b/other') })).toBe(
      'config error at transport.url[1] (from SURETY_AMQP_URL): names another vhost than transport.url[0]: every node of a cluster serves the same vhosts',
    );
    expect(await configProblem({ env: env('amqp://u:hunter2@a,http://u:hunter2@b') })).toBe(
      'config error at transport.url[1] (from SURETY_AMQP_URL): must start with amqp:// or amqps:// (got "http://u:***@b/")',
    );
    expect(await configProblem({ env: env('amqp://a,b:5672') })).toBe(
      'config error at transport.url (from SURETY_AMQP_URL): names several hosts ("a,b"): give one URL per node in a list, e.g. ["amqp://mq-a:5672", "amqp://mq-b:5672"]',
    );
  });

  it('names the key path and the allowed values of every bad value', async () => {
    const bad = file(
      'bad.yaml',
      `database: { url: "postgres://app:hunter2@db/app" }
transport: { kind: sqs }
consol: { enabled: true }
console:
  port: 70000
  tokens: [{ name: ops, role: admin, token: short }]
relay: { batchSize: 0 }
doctor: { relayStaleMs: soon }
`,
    );
    const message = await configProblem({ file: bad, env: {} });
    expect(message.split('\n')).toEqual([
      'config error at transport.kind: must be one of rabbitmq, embedded, nats, redis, kafka (got "sqs")',
      'config error at relay.batchSize: must be at least 1 (got 0)',
      'config error at console.port: must be at most 65535 (got 70000)',
      'config error at console.tokens[0].role: must be one of viewer, operator',
      'config error at console.tokens[0].token: must be at least 16 characters long',
      'config error at doctor.relayStaleMs: must be a duration: milliseconds, or a number with ms, s, m, h or d (e.g. 30s, 15m, 7d) (got "soon")',
      'config error at consol: unknown key; allowed: database, databases, transport, relay, replayer, console, doctor',
    ]);
    expect(message).not.toContain('short'); // a secret is never echoed
    expect(message).not.toContain('hunter2');
  });

  it('says what a section needs, and which variable set a bad value', async () => {
    expect(await configProblem({ env: {} })).toBe(
      'config error at database: is required: set database.url, SURETY_DATABASE_URL or --database; or databases for several (SURETY_DATABASES)',
    );
    expect(await configProblem({ env: { SURETY_DATABASE_URL: 'oracle://u:pw@h/db' } })).toBe(
      'config error at database.url (from SURETY_DATABASE_URL): unsupported URL "oracle://u:***@h/db": use postgres://, mysql://, mariadb:// or sqlite:<path>',
    );
    expect(
      await configProblem({
        env: { SURETY_DATABASE_URL: 'sqlite:x', SURETY_CONSOLE_PORT: 'eighty', SURETY_TRANSPORT: 'sqs' },
      }),
    ).toBe(
      [
        'config error at transport.kind (from SURETY_TRANSPORT): must be one of rabbitmq, embedded, nats, redis, kafka (got "sqs")',
        'config error at console.port (from SURETY_CONSOLE_PORT): must be a number (got "eighty")',
      ].join('\n'),
    );
    expect(
      await configProblem({
        env: { SURETY_DATABASE_URL: 'sqlite:x', SURETY_TRANSPORT: 'rabbitmq', SURETY_LOG_PATH: 'l' },
      }),
    ).toBe(
      [
        'config error at transport.url: is required for kind "rabbitmq" (amqp://user:pass@host:5672/vhost)',
        'config error at transport.path (from SURETY_LOG_PATH): is not used by kind "rabbitmq"',
      ].join('\n'),
    );
    expect(await configProblem({ env: { SURETY_DATABASE_URL: 'sqlite:x', SURETY_CONSOLE_ENABLED: 'yes' } })).toBe(
      'config error at console.tokens: at least one token is required when console.enabled is true',
    );
    expect(await configProblem({ env: { SURETY_DATABASE_URL: 'sqlite:x', SURETY_REPLAYER_ENABLED: 'true' } })).toBe(
      'config error at replayer.module: is required when replayer.enabled is true (a module exporting your Consumer)',
    );
  });

  it('refuses an unreadable or malformed file', async () => {
    expect(await configProblem({ file: join(dir, 'missing.yaml'), env: {} })).toBe(
      `config error at (file): cannot read ${join(dir, 'missing.yaml')}: no such file`,
    );
    expect(await configProblem({ file: file('broken.yaml', 'database: [unclosed\n'), env: {} })).toMatch(
      /^config error at \(file\): .*broken\.yaml is not valid YAML: /,
    );
    expect(await configProblem({ file: file('broken.json', '{"database": '), env: {} })).toMatch(/is not valid JSON/);
    expect(await configProblem({ file: file('list.yaml', '- a\n- b\n'), env: {} })).toMatch(
      /must hold a mapping of sections/,
    );
  });

  it('a bad config stops every command with exit code 2 before it touches anything', async () => {
    const bad = file('cli-bad.yaml', 'database: { url: "sqlite::memory:" }\ntransport: { kind: sqs }\n');
    for (const args of [['migrate'], ['doctor'], ['dlq', 'list'], ['outbox', 'list'], ['audit'], ['start']]) {
      const res = await runCli([...args, '--config', bad]);
      expect({ args, code: res.code }).toEqual({ args, code: 2 });
      expect(res.err).toBe(
        'surety: config error at transport.kind: must be one of rabbitmq, embedded, nats, redis, kafka (got "sqs")\n',
      );
    }
    const viaEnv = await runCli(['dlq', 'list'], { SURETY_CONFIG: bad });
    expect(viaEnv.code).toBe(2);
  });
});
