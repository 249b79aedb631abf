import { parseDatabasesVariable } from './databases-variable.js';
import { splitUrls } from './node-urls.js';
import { setValue } from './set-value.js';
import { parseTokensVariable } from './tokens-variable.js';

/** How an environment variable's text becomes a config value. */
type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'list' | 'urls' | 'tokens' | 'databases';

export interface EnvVariable {
  readonly name: string;
  /** Dotted config path it sets. */
  readonly path: string;
  readonly kind: Kind;
  readonly description: string;
}

/**
 * Environment variables, applied over the config file (the environment wins). Documented in
 * docs/configuration.md and `surety --help`.
 */
export const ENV_VARIABLES: readonly EnvVariable[] = [
  { name: 'SURETY_DATABASE_URL', path: 'database.url', kind: 'string', description: 'database URL' },
  // Before the prefix and schema, which then apply to each of these databases.
  {
    name: 'SURETY_DATABASES',
    path: 'databases',
    kind: 'databases',
    description: 'comma-separated name=url (several databases)',
  },
  {
    name: 'SURETY_TABLE_PREFIX',
    path: 'database.tablePrefix',
    kind: 'string',
    description: 'table prefix (of every database)',
  },
  {
    name: 'SURETY_DATABASE_SCHEMA',
    path: 'database.schema',
    kind: 'string',
    description: 'PostgreSQL schema (of every database)',
  },
  {
    name: 'SURETY_TRANSPORT',
    path: 'transport.kind',
    kind: 'string',
    description: 'rabbitmq, nats, redis or embedded',
  },
  {
    name: 'SURETY_AMQP_URL',
    path: 'transport.url',
    kind: 'urls',
    description: 'RabbitMQ URL (comma-separated: one per cluster node)',
  },
  {
    name: 'SURETY_AMQP_MANAGEMENT_URL',
    path: 'transport.managementUrl',
    kind: 'urls',
    description: 'RabbitMQ management API URL (comma-separated: one per node)',
  },
  {
    name: 'SURETY_NATS_URL',
    path: 'transport.url',
    kind: 'urls',
    description: 'NATS server URL (comma-separated: one per cluster server)',
  },
  {
    name: 'SURETY_KAFKA_BROKERS',
    path: 'transport.brokers',
    kind: 'list',
    description: 'Kafka bootstrap brokers, comma-separated host:port',
  },
  { name: 'SURETY_REDIS_URL', path: 'transport.url', kind: 'string', description: 'Redis URL (Redis Streams)' },
  { name: 'SURETY_LOG_PATH', path: 'transport.path', kind: 'string', description: 'embedded log file' },
  { name: 'SURETY_QUEUES', path: 'transport.queues', kind: 'list', description: 'comma-separated queue names' },
  { name: 'SURETY_RELAY_ENABLED', path: 'relay.enabled', kind: 'boolean', description: 'run the relay (start)' },
  {
    name: 'SURETY_REPLAYER_ENABLED',
    path: 'replayer.enabled',
    kind: 'boolean',
    description: 'run the replayer (start)',
  },
  { name: 'SURETY_REPLAYER_MODULE', path: 'replayer.module', kind: 'string', description: 'consumer module' },
  {
    name: 'SURETY_CONSOLE_ENABLED',
    path: 'console.enabled',
    kind: 'boolean',
    description: 'serve the console (start)',
  },
  { name: 'SURETY_CONSOLE_HOST', path: 'console.host', kind: 'string', description: 'console listen address' },
  { name: 'SURETY_CONSOLE_PORT', path: 'console.port', kind: 'integer', description: 'console port' },
  {
    name: 'SURETY_SESSION_SECRET',
    path: 'console.sessionSecret',
    kind: 'string',
    description: 'session cookie key (32+ characters)',
  },
  {
    name: 'SURETY_TOKENS',
    path: 'console.tokens',
    kind: 'tokens',
    description: 'comma-separated name:role:token (or name:role:sha256=<hex>)',
  },
];

/**
 * Parses one variable. A value of the wrong shape is passed on as text, so the schema refuses it
 * with the same message a file would get; lists of entries that hold secrets (databases, tokens)
 * are checked here, by errors that never show an entry.
 */
function convert(kind: Kind, raw: string, name: string): unknown {
  const text = raw.trim();
  switch (kind) {
    case 'databases':
      return parseDatabasesVariable(text, name);
    case 'integer':
    case 'number':
      return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    case 'boolean':
      return /^(true|1|yes|on)$/i.test(text) ? true : /^(false|0|no|off)$/i.test(text) ? false : text;
    case 'list':
      return text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    case 'urls':
      return splitUrls(text);
    case 'tokens':
      return parseTokensVariable(text, name);
    default:
      return text;
  }
}

/** Writes the set variables into `target` (a parsed config file). Returns path -> variable name. */
export function applyEnvironment(
  target: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
): Map<string, string> {
  const sources = new Map<string, string>();
  for (const v of ENV_VARIABLES) {
    const raw = env[v.name];
    if (raw === undefined || raw.trim() === '') continue;
    setValue(target, v.path, convert(v.kind, raw, v.name), sources, v.name);
  }
  return sources;
}
