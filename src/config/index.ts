/** The `surety` config file (JSON or YAML) merged with environment variables. */
export { loadConfig, type LoadConfigOptions, type LoadedConfig, type ConfigOverride } from './load-config.js';
export { configSchema, type SuretyConfig, type SuretyConfigInput, type TokenConfig } from './schema.js';
export { configuredDatabases, namesDatabases, type NamedDatabase } from './databases.js';
export type { DatabaseConfig } from './database-schema.js';
export { ConfigError, type ConfigProblem } from './config-error.js';
export { ENV_VARIABLES, type EnvVariable } from './env.js';
export { parseDuration } from './duration.js';
