import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { cliFixtures, configFolder, configProblem, runCli, type CliFixture } from './cli-harness.js';

const { file } = configFolder('surety-config-secrets-');

/** What a token looks like when an operator pastes it: base64 with + / =. */
const TOKEN = 'Zm9vYmFy+c2VjcmV0/dG9rZW4=';

/** The ConfigError `loadConfig` fails with, and everything of it that could end up printed or logged. */
async function failure(options: Parameters<typeof loadConfig>[0]): Promise<{ message: string; everything: string }> {
  const err = await loadConfig(options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  const e = err as ConfigError;
  const everything = [e.message, JSON.stringify(e.problems), String(e.cause), e.stack].join('\n');
  return { message: e.message, everything };
}

describe('config errors never show a secret', () => {
  it('names a malformed SURETY_TOKENS entry by position, never echoing it', async () => {
    const form = 'must be name:role:token or name:role:sha256=<hex>';
    const cases: [string, string][] = [
      // The name:role prefix forgotten.
      [TOKEN, `entry 1 of 1 ${form}`],
      ['ops=operator=' + TOKEN, `entry 1 of 1 ${form}`],
      [`ops:operator:${TOKEN}-ops,${TOKEN}`, `entry 2 of 2 ${form}`],
      ['ops:operator:', `entry 1 of 1 ${form}`],
      // Fields in the wrong order: the token is where the role should be.
      [`ops:${TOKEN}:operator`, 'entry 1 of 1: the role (after the first ":") must be viewer or operator'],
    ];
    for (const [value, expected] of cases) {
      const { message, everything } = await failure({
        env: { SURETY_DATABASE_URL: 'sqlite:x.db', SURETY_TOKENS: value },
      });
      expect({ value, message }).toEqual({
        value,
        message: `config error at console.tokens (from SURETY_TOKENS): ${expected}`,
      });
      expect(everything).not.toContain(TOKEN);
    }
  });

  it('shows nothing of a token entry the schema refuses', async () => {
    const cases: [string, string[]][] = [
      // The token where the name should be.
      [
        `${TOKEN}:operator:0123456789abcdef`,
        [
          'config error at console.tokens[0].name (from SURETY_TOKENS): must be 1-64 characters of letters, digits and . _ @ : -',
        ],
      ],
      [
        'ops:operator:s3cr3t',
        ['config error at console.tokens[0].token (from SURETY_TOKENS): must be at least 16 characters long'],
      ],
      [
        'ops:operator:sha256=s3cr3t',
        [
          'config error at console.tokens[0].sha256 (from SURETY_TOKENS): must be 64 hex digits (the SHA-256 of the token)',
        ],
      ],
    ];
    for (const [value, expected] of cases) {
      const { message, everything } = await failure({
        env: { SURETY_DATABASE_URL: 'sqlite:x.db', SURETY_TOKENS: value },
      });
      expect({ value, lines: message.split('\n') }).toEqual({ value, lines: expected });
      expect(everything).not.toMatch(/s3cr3t|Zm9v/);
    }
    // A token given as a string in the file, and two tokens with one name.
    const listed = file(
      'token-string.yaml',
      `database: { url: sqlite:x.db }\nconsole:\n  tokens: ["ops:operator:${TOKEN}"]\n`,
    );
    const asString = await failure({ file: listed, env: {} });
    expect(asString.message).toBe('config error at console.tokens[0]: must be a mapping (object)');
    expect(asString.everything).not.toContain(TOKEN);
    const twice = file(
      'token-twice.yaml',
      `database: { url: sqlite:x.db }\nconsole:\n  tokens:\n    - { name: ${'a'.repeat(20)}, role: viewer, token: ${'v'.repeat(20)} }\n    - { name: ${'a'.repeat(20)}, role: operator, token: ${'o'.repeat(20)} }\n`,
    );
    expect(await configProblem({ file: twice, env: {} })).toBe(
      'config error at console.tokens[1].name: is the name of tokens[0] too: token names must be unique',
    );
  });

  it('a malformed SURETY_TOKENS stops the CLI with exit 2 and nothing of the token on stderr', async () => {
    for (const value of [TOKEN, `ops=operator=${TOKEN}`, `${TOKEN}:operator:0123456789abcdef`]) {
      const res = await runCli(['dlq', 'list'], { SURETY_DATABASE_URL: 'sqlite::memory:', SURETY_TOKENS: value });
      expect({ value, code: res.code }).toEqual({ value, code: 2 });
      expect(res.err).toMatch(/^surety: config error at console\.tokens/);
      expect(res.err + res.out).not.toContain(TOKEN);
    }
  });

  it('a file that does not parse is located by line and column, never quoted', async () => {
    const tokenLine = `  "console": { "tokens": [{ "name": "ops", "role": "operator", "token": ${TOKEN} }] }`;
    const json = file('broken-token.json', `{\n  "database": { "url": "sqlite:x.db" },\n${tokenLine}\n}\n`);
    const badJson = await failure({ file: json, env: {} });
    expect(badJson.message).toBe(
      `config error at (file): ${json} is not valid JSON: Unexpected token at line 3, column ${tokenLine.indexOf(TOKEN) + 1}`,
    );
    expect(badJson.everything).not.toContain(TOKEN);
    const yaml = file('broken-token.yaml', `console:\n  tokens:\n    - token: ${TOKEN}: ops\n`);
    const badYaml = await failure({ file: yaml, env: {} });
    expect(badYaml.message).toMatch(/is not valid YAML: .* at line 3, column \d+$/);
    expect(badYaml.everything).not.toContain(TOKEN);
  });

  it('masks the password of every URL form in config errors', async () => {
    for (const url of [
      'postgress://app:pa/ss@db/app',
      'postgress://app:p@ss@db/app',
      'postgress://:pa/ss@db/app',
      'oracle://db/app?user=app&password=pa/ss',
      'app:pa/ss@db/app',
    ]) {
      const res = await runCli(['migrate', '--database', url]);
      expect({ url, code: res.code }).toEqual({ url, code: 2 });
      expect(res.err).toMatch(/^surety: config error at database\.url \(from --database\): unsupported URL "/);
      expect(res.err).not.toContain('pa/ss');
      expect(res.err).not.toContain('p@ss');
    }
    const amqp = await failure({
      env: { SURETY_DATABASE_URL: 'sqlite:x.db', SURETY_AMQP_URL: 'amqq://guest:pa/ss@host' },
    });
    expect(amqp.message).toBe(
      'config error at transport.url (from SURETY_AMQP_URL): must start with amqp:// or amqps:// (got "amqq://***@host")',
    );
  });
});

describe('migrate output', () => {
  let f: CliFixture | undefined;
  afterEach(async () => {
    await f?.teardown();
    f = undefined;
  });

  it('shows the database URL without its password or secret parameters (PostgreSQL)', async () => {
    f = await cliFixtures.postgres();
    // The local server trusts loopback connections, so any password connects.
    const url = new URL(f.database.url);
    url.password = 'pa/ss';
    url.searchParams.set('password', 'pa/ss');
    const withSecrets = url.href;
    expect(withSecrets).toContain('pa%2Fss');
    const json = await runCli(['migrate', '--json', '--database', withSecrets, '--schema', f.database.schema!]);
    expect(json.code, json.err).toBe(0);
    const shown = JSON.parse(json.out) as { database: string };
    expect(shown.database).toBe(`${url.protocol}//${url.username}:***@${url.host}${url.pathname}`);
    const human = await runCli(['migrate', '--database', withSecrets, '--schema', f.database.schema!]);
    expect(human.code, human.err).toBe(0);
    expect(human.out).toContain(`(${shown.database})`);
    expect(json.out + human.out).not.toMatch(/pa%2Fss|pa\/ss/);
  });
});
