import { describe, expect, it } from 'vitest';
import { configuredDatabases, loadConfig } from '../../src/config/index.js';
import { configFolder, configProblem, runCli } from './cli-harness.js';

const { file } = configFolder('surety-databases-');

const TWO = `databases:
  orders: { url: "sqlite:orders.sqlite" }
  billing: { url: "postgres://app:hunter2@db/billing", schema: ops, tablePrefix: bill_ }
`;

describe('config with several databases', () => {
  it('loads `databases` in order, the first being the default; `database` is named "default"', async () => {
    const path = file(
      'two.yaml',
      `${TWO}relay: { databases: [orders] }
replayer: { enabled: true, module: ./consumers.js, database: billing }
`,
    );
    const { config } = await loadConfig({ file: path, env: {} });
    expect(config.database).toBeUndefined();
    expect(configuredDatabases(config)).toEqual([
      { name: 'orders', url: 'sqlite:orders.sqlite', tablePrefix: 'surety_' },
      { name: 'billing', url: 'postgres://app:hunter2@db/billing', tablePrefix: 'bill_', schema: 'ops' },
    ]);
    expect(config.relay.databases).toEqual(['orders']);
    expect(config.replayer.database).toBe('billing');

    const single = await loadConfig({ env: { SURETY_DATABASE_URL: 'sqlite:app.db' } });
    expect(configuredDatabases(single.config)).toEqual([
      { name: 'default', url: 'sqlite:app.db', tablePrefix: 'surety_' },
    ]);
  });

  it('refuses both forms, or neither, naming the keys and where each was set', async () => {
    expect(await configProblem({ file: file('both.yaml', `database: { url: "sqlite:a.db" }\n${TWO}`), env: {} })).toBe(
      'config error at databases: give either database (one) or databases (several, by name), not both',
    );
    expect(await configProblem({ file: file('two-env.yaml', TWO), env: { SURETY_DATABASE_URL: 'sqlite:x.db' } })).toBe(
      'config error at databases: give either database (one) or databases (several, by name), not both ' +
        '(database from SURETY_DATABASE_URL; databases from the config file)',
    );
    expect(
      await configProblem({
        env: { SURETY_DATABASE_URL: 'sqlite:x.db', SURETY_DATABASES: 'orders=sqlite:o.db' },
      }),
    ).toBe(
      'config error at databases: give either database (one) or databases (several, by name), not both ' +
        '(database from SURETY_DATABASE_URL; databases from SURETY_DATABASES)',
    );
    expect(await configProblem({ file: file('neither.yaml', 'relay: { enabled: false }\n'), env: {} })).toBe(
      'config error at database: is required: set database.url, SURETY_DATABASE_URL or --database; ' +
        'or databases for several (SURETY_DATABASES)',
    );
    // Reported together with the other mistakes, not after them.
    expect(
      (await configProblem({ file: file('neither-bad.yaml', 'transport: { kind: sqs }\n'), env: {} })).split('\n'),
    ).toEqual([
      'config error at transport.kind: must be one of rabbitmq, embedded, nats, redis, kafka (got "sqs")',
      'config error at database: is required: set database.url, SURETY_DATABASE_URL or --database; ' +
        'or databases for several (SURETY_DATABASES)',
    ]);
  });

  it('names a bad database name, entry, or reference to a database', async () => {
    const bad = file(
      'bad-names.yaml',
      `databases:
  orders: { url: "sqlite:o.db", user: app }
  9lives: { url: "sqlite:n.db" }
  "billing db": { url: "oracle://app:hunter2@db/billing" }
  shipping: { tablePrefix: ship_ }
relay: { databases: [orders, nope] }
replayer: { database: invoices }
`,
    );
    expect((await configProblem({ file: bad, env: {} })).split('\n')).toEqual([
      'config error at databases.orders.user: unknown key; allowed: url, tablePrefix, schema',
      'config error at databases.billing db.url: unsupported URL "oracle://app:***@db/billing": use postgres://, mysql://, mariadb:// or sqlite:<path>',
      'config error at databases.shipping.url: is required (postgres://…, mysql://…, mariadb://… or sqlite:<path>)',
      'config error at databases.9lives: must be a database name: a letter, then letters, digits, _ or -, at most 40 characters (got "9lives")',
      'config error at databases.billing db: must be a database name: a letter, then letters, digits, _ or -, at most 40 characters (got "billing db")',
      'config error at relay.databases[1]: must be one of the databases: orders, 9lives, billing db, shipping (got "nope")',
      'config error at replayer.database: must be one of the databases: orders, 9lives, billing db, shipping (got "invoices")',
    ]);
    expect(await configProblem({ file: file('empty.yaml', 'databases: {}\n'), env: {} })).toBe(
      'config error at databases: must name at least one database',
    );
    expect(await configProblem({ file: file('relay-none.yaml', `${TWO}relay: { databases: [] }\n`), env: {} })).toBe(
      'config error at relay.databases: must name at least one database (or set relay.enabled to false)',
    );
    // With `database`, its one name is "default".
    expect(
      await configProblem({
        env: { SURETY_DATABASE_URL: 'sqlite:x.db' },
        overrides: [{ path: 'replayer.database', value: 'orders', source: 'test' }],
      }),
    ).toBe('config error at replayer.database (from test): must be one of the databases: default (got "orders")');
  });
});

describe('SURETY_DATABASES', () => {
  it('gives several databases as name=url, keeps commas inside URLs, and prefix and schema apply to each', async () => {
    const { config } = await loadConfig({
      env: {
        SURETY_DATABASES: ' orders=sqlite:orders.sqlite , billing=postgres://app:pa,ss@db:5432/billing?sslmode=disable',
        SURETY_TABLE_PREFIX: 'shop_',
        SURETY_DATABASE_SCHEMA: 'ops',
      },
    });
    expect(configuredDatabases(config)).toEqual([
      { name: 'orders', url: 'sqlite:orders.sqlite', tablePrefix: 'shop_', schema: 'ops' },
      {
        name: 'billing',
        url: 'postgres://app:pa,ss@db:5432/billing?sslmode=disable',
        tablePrefix: 'shop_',
        schema: 'ops',
      },
    ]);
  });

  it('replaces the databases of the file; flags for prefix and schema apply to each of them', async () => {
    const path = file('replaced.yaml', TWO);
    const { config } = await loadConfig({
      file: path,
      env: { SURETY_DATABASES: 'audit=sqlite:audit.db' },
      overrides: [{ path: 'database.tablePrefix', value: 'cli_', source: '--table-prefix' }],
    });
    expect(configuredDatabases(config)).toEqual([{ name: 'audit', url: 'sqlite:audit.db', tablePrefix: 'cli_' }]);
    const { config: fromFile } = await loadConfig({
      file: path,
      env: {},
      overrides: [{ path: 'database.schema', value: 'other', source: '--schema' }],
    });
    expect(configuredDatabases(fromFile).map((d) => [d.name, d.schema, d.tablePrefix])).toEqual([
      ['orders', 'other', 'surety_'],
      ['billing', 'other', 'bill_'],
    ]);
  });

  it('refuses a malformed value, naming the variable and never echoing a password', async () => {
    const cases: [string, string][] = [
      [
        'postgres://app:hunter2@db/orders',
        'config error at databases (from SURETY_DATABASES): entry 1 of 1 must be name=url (e.g. orders=postgres://…,billing=sqlite:billing.sqlite)',
      ],
      [
        'postgres://app:hunter2@db/billing?sslmode=require',
        'config error at databases (from SURETY_DATABASES): entry 1 of 1: the name before "=" must be a database name: a letter, then letters, digits, _ or -, at most 40 characters',
      ],
      [
        'orders=sqlite:o.db,9lives=sqlite:n.db',
        'config error at databases (from SURETY_DATABASES): entry 2 of 2: the name before "=" must be a database name: a letter, then letters, digits, _ or -, at most 40 characters',
      ],
      [
        'orders=,billing=sqlite:b.db',
        'config error at databases (from SURETY_DATABASES): entry 1 of 2 must be name=url (e.g. orders=postgres://…,billing=sqlite:billing.sqlite)',
      ],
      [
        'orders=postgres://app:hunter2@db/a,orders=postgres://app:hunter2@db/b',
        'config error at databases (from SURETY_DATABASES): names the database "orders" twice',
      ],
      [
        'orders=sqlite:o.db,billing=oracle://app:hunter2@db/billing',
        'config error at databases.billing.url (from SURETY_DATABASES): unsupported URL "oracle://app:***@db/billing": use postgres://, mysql://, mariadb:// or sqlite:<path>',
      ],
    ];
    for (const [value, expected] of cases) {
      const message = await configProblem({ env: { SURETY_DATABASES: value } });
      expect({ value, message }).toEqual({ value, message: expected });
      expect(message).not.toContain('hunter2');
    }
    const cli = await runCli(['dlq', 'list'], { SURETY_DATABASES: 'postgres://app:hunter2@db/orders' });
    expect(cli.code).toBe(2);
    expect(cli.err).toContain('config error at databases (from SURETY_DATABASES)');
    expect(cli.err).not.toContain('hunter2');
  });

  it('--database over a config of several databases is refused, naming both', async () => {
    const res = await runCli(['dlq', 'list', '--config', file('cli-two.yaml', TWO), '--database', 'sqlite:x.db']);
    expect(res).toMatchObject({
      code: 2,
      err:
        'surety: config error at databases: give either database (one) or databases (several, by name), not both ' +
        '(database from --database; databases from the config file)\n',
    });
    expect(res.err).not.toContain('hunter2');
  });
});
