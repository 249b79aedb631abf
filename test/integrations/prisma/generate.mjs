// Generates the Prisma clients of the tests, one per database (./generated, not committed), before type-checking and testing.
// `prisma generate` needs no engine binary with the `prisma-client` generator, but the CLI downloads the
// schema engine first unless one is named: naming any file skips a download this machine may be unable to make.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
for (const name of ['schema.prisma', 'schema-mysql.prisma', 'schema-sqlite.prisma']) {
  const schema = fileURLToPath(new URL(name, import.meta.url));
  const run = spawnSync('npx', ['prisma', 'generate', '--schema', schema], { env, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
