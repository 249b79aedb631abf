import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './config-error.js';
import { applyEnvironment } from './env.js';
import { toProblems } from './issues.js';
import { nulProblems } from './nul-values.js';
import { configSchema, type SuretyConfig } from './schema.js';
import { setValue } from './set-value.js';
import { describeSyntaxError } from './syntax-error.js';

/** A value given on the command line, applied over file and environment. */
export interface ConfigOverride {
  /** Dotted path, e.g. `database.url`. */
  readonly path: string;
  readonly value: unknown;
  /** How it was given, for messages, e.g. `--database`. */
  readonly source: string;
}

export interface LoadConfigOptions {
  /** Config file, JSON or YAML. Default: SURETY_CONFIG; without either, environment and overrides only. */
  readonly file?: string;
  /** Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly overrides?: readonly ConfigOverride[];
  /** Relative paths from the environment or overrides resolve against this. Default: process.cwd(). */
  readonly cwd?: string;
}

export interface LoadedConfig {
  readonly config: SuretyConfig;
  /** The file read, if any (absolute). */
  readonly file: string | undefined;
}

/**
 * Reads the config file, applies environment variables and overrides, and validates the result
 * once. Unknown keys are refused; a bad value throws a {@link ConfigError} naming its key path and
 * what is allowed. Relative paths in the file (`transport.path`, `replayer.module`) are relative to
 * the file.
 * @example
 * const { config } = await loadConfig({ file: 'surety.yaml' });
 * // config error at transport.kind: must be one of rabbitmq, embedded, nats, redis, kafka (got "sqs")
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const fileOption = options.file ?? env.SURETY_CONFIG;
  const file = fileOption ? resolve(cwd, fileOption) : undefined;
  const raw = file ? await readConfigFile(file) : {};
  const sources = applyEnvironment(raw, env);
  for (const o of options.overrides ?? []) {
    if (o.value !== undefined) setValue(raw, o.path, o.value, sources, o.source);
  }
  inferTransportKind(raw);
  const nul = nulProblems(raw, sources);
  if (nul.length > 0) throw new ConfigError(nul);
  const result = configSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(toProblems(result.error.issues, configSchema, raw, sources));
  const config = result.data;
  const base = (path: string) => (file && !sources.has(path) ? dirname(file) : cwd);
  const abs = (path: string, p: string) => (isAbsolute(p) ? p : resolve(base(path), p));
  if (config.transport?.path) config.transport.path = abs('transport.path', config.transport.path);
  if (config.replayer.module) config.replayer.module = abs('replayer.module', config.replayer.module);
  return { config, file };
}

async function readConfigFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code ?? err);
    throw new ConfigError([{ path: '(file)', message: `cannot read ${file}: ${why}` }], { cause: err });
  }
  const format = /\.json$/i.test(file) ? 'JSON' : 'YAML';
  let parsed: unknown;
  try {
    // YAML is a superset of JSON; JSON.parse first gives better positions for .json files.
    parsed = format === 'JSON' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    // No cause: the parser's message quotes the file, which may hold a secret.
    const why = describeSyntaxError(text, err, format);
    throw new ConfigError([{ path: '(file)', message: `${file} is not valid ${format}: ${why}` }]);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError([
      { path: '(root)', message: `${file} must hold a mapping of sections (database, transport, ...)` },
    ]);
  return parsed as Record<string, unknown>;
}

/** With only a URL (e.g. SURETY_AMQP_URL) the kind is obvious; say it only when it is not. */
function inferTransportKind(raw: Record<string, unknown>): void {
  const t = raw.transport;
  if (t === null || typeof t !== 'object' || Array.isArray(t)) return;
  const transport = t as Record<string, unknown>;
  if (transport.kind !== undefined) return;
  if (transport.brokers !== undefined && transport.url === undefined && transport.path === undefined) {
    transport.kind = 'kafka';
    return;
  }
  const url = [transport.url].flat()[0];
  if (typeof url === 'string' && /^(nats|tls):\/\//.test(url) && transport.path === undefined) transport.kind = 'nats';
  else if (typeof url === 'string' && /^rediss?:\/\//.test(url) && transport.path === undefined)
    transport.kind = 'redis';
  else if (transport.url !== undefined && transport.path === undefined) transport.kind = 'rabbitmq';
  else if (transport.path !== undefined && transport.url === undefined) transport.kind = 'embedded';
}
