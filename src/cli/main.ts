import { parseArgs } from 'node:util';
import { describeError, SuretyError } from '../core/errors.js';
import { openOutboxStore, redact } from '../stores/open-store.js';

const USAGE = `Usage: surety <command> [options]

Commands:
  migrate     Create or upgrade Surety's tables (idempotent)

Options:
  --database <url>      postgres://…, mysql://…, mariadb://… or sqlite:<path>  (env SURETY_DATABASE_URL)
  --schema <name>       PostgreSQL schema (default: the search path)
  --table-prefix <p>    Table prefix (default: surety_)
  --json                Machine-readable output
  -h, --help            Show this help
`;

/** Exit codes: 0 done, 1 failed, 2 bad usage. */
export async function main(
  argv: string[],
  out: Pick<NodeJS.WritableStream, 'write'> = process.stdout,
  err: Pick<NodeJS.WritableStream, 'write'> = process.stderr,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        database: { type: 'string' },
        schema: { type: 'string' },
        'table-prefix': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    err.write(`surety: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const command = positionals[0];
  if (values.help || !command) {
    (values.help ? out : err).write(USAGE);
    return values.help ? 0 : 2;
  }
  if (command !== 'migrate') {
    err.write(`surety: unknown command "${command}" (allowed: migrate)\n`);
    return 2;
  }
  const url = values.database ?? process.env.SURETY_DATABASE_URL;
  if (!url) {
    err.write('surety: missing --database <url> (or SURETY_DATABASE_URL)\n');
    return 2;
  }
  try {
    const store = await openOutboxStore({
      url,
      ...(values.schema ? { schema: values.schema } : {}),
      ...(values['table-prefix'] ? { tablePrefix: values['table-prefix'] } : {}),
    });
    try {
      await store.migrate();
    } finally {
      await store.close();
    }
    const result = {
      command: 'migrate',
      database: redact(url),
      dialect: store.dialect,
      table: store.outboxTable,
      ok: true,
    };
    out.write(
      values.json
        ? `${JSON.stringify(result)}\n`
        : `migrated ${store.dialect} (${redact(url)}): ${store.outboxTable} is up to date\n`,
    );
    return 0;
  } catch (e) {
    const usage = e instanceof SuretyError && e.code === 'SURETY_INVALID_OPTION';
    err.write(`surety: ${describeError(e)}\n`);
    return usage ? 2 : 1;
  }
}
