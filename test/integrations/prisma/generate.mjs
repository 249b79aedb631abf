// Generates the Prisma client of the tests (./generated, not committed) before type-checking and testing.
// `prisma generate` needs no engine binary with the `prisma-client` generator, but the CLI downloads the
// schema engine first unless one is named: naming any file skips a download this machine may be unable to make.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const schema = fileURLToPath(new URL('./schema.prisma', import.meta.url));
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
const run = spawnSync('npx', ['prisma', 'generate', '--schema', schema], { env, stdio: 'inherit' });
process.exit(run.status ?? 1);
