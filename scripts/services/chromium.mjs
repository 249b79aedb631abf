import { existsSync } from 'node:fs';
import { run } from './tools.mjs';

/** The console's browser tests need Chromium: say whether it is there. Reported only; .ci/run installs it. */
export async function reportChromium() {
  const path = process.env.SURETY_CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(path)) {
    const ci = /^(1|true|yes)$/i.test(process.env.CI ?? '');
    console.log(
      `chromium: not found at ${path}; the browser tests will ${ci ? 'FAIL (CI is set)' : 'be skipped'}. Install: apt-get install chromium`,
    );
    return;
  }
  const r = await run(path, ['--version'], { timeoutMs: 15_000 });
  const version = r.output.split('\n').find((line) => /chrom/i.test(line) && !line.startsWith(path));
  console.log(`chromium: ${path}${version ? ` (${version.trim()})` : ''}`);
}
