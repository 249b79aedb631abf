/**
 * `npm run bench`: every scenario (or those named in BENCH_ONLY, comma-separated), each contender in
 * its own process. Prints a table per scenario and writes bench/results/latest.json.
 * Env: BENCH_ONLY, BENCH_REPETITIONS (5) and the sizes in lib/config.ts (BENCH_BROKER_MESSAGES for brokers).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { settings } from './lib/config.js';
import { describeMachine } from './lib/machine.js';
import { renderScenario, type ScenarioResult } from './lib/results.js';
import { brokerRelays } from './scenarios/broker-relays.js';
import { consumerDrain } from './scenarios/consumer-drain.js';
import { endToEnd } from './scenarios/end-to-end.js';
import { flatCost } from './scenarios/flat-cost.js';
import { outboxLifetime } from './scenarios/outbox-lifetime.js';
import { relayDrain } from './scenarios/relay-drain.js';

const SCENARIOS: Record<string, () => Promise<ScenarioResult>> = {
  relay: relayDrain,
  lifetime: outboxLifetime,
  e2e: endToEnd,
  consumer: consumerDrain,
  flat: flatCost,
  brokers: brokerRelays,
};

const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const unknown = only?.filter((s) => !(s in SCENARIOS));
if (unknown?.length)
  throw new Error(`BENCH_ONLY: unknown ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`);

const started = new Date();
const machine = await describeMachine();
console.log(`Surety bench, ${started.toISOString()}: ${JSON.stringify(machine)}\n`);
const scenarios: (ScenarioResult & { seconds: number })[] = [];
for (const [id, run] of Object.entries(SCENARIOS)) {
  if (only && !only.includes(id)) continue;
  const t = performance.now();
  const result = await run();
  const seconds = Math.round((performance.now() - t) / 1000);
  scenarios.push({ ...result, seconds });
  console.log(renderScenario(result));
  console.log(`(${seconds} s)\n`);
}
const file = fileURLToPath(new URL('./results/latest.json', import.meta.url));
mkdirSync(fileURLToPath(new URL('./results/', import.meta.url)), { recursive: true });
writeFileSync(file, JSON.stringify({ date: started.toISOString(), machine, settings, scenarios }, null, 2) + '\n');
console.log(`written: bench/results/latest.json`);
