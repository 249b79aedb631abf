/**
 * `npx tsx bench/report.ts [file]`: the markdown of a run (default bench/results/latest.json) for the
 * README's Performance section and docs/benchmarks.md: its date and machine, then every scenario
 * (relay, lifetime, e2e, consumer, flat, brokers).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderScenario, type ScenarioResult } from './lib/results.js';

interface Run {
  readonly date: string;
  readonly machine: Record<string, string | number>;
  readonly settings: Record<string, number>;
  readonly scenarios: readonly (ScenarioResult & { seconds: number })[];
}

const file = process.argv[2] ?? fileURLToPath(new URL('./results/latest.json', import.meta.url));
const run = JSON.parse(readFileSync(file, 'utf8')) as Run;
const m = run.machine;
const out = [
  `## Run of ${run.date.slice(0, 10)}`,
  '',
  `${m.cores} cores (${m.cpu}), PostgreSQL ${String(m.postgres).split(' ')[0]}, RabbitMQ ${m.rabbitmq}, ` +
    // Runs before the brokers scenario recorded RabbitMQ only.
    (m.kafka ? `Kafka ${m.kafka}, NATS ${m.nats}, Redis ${m.redis}, ` : '') +
    `Node ${m.node}; ` +
    'every server on the same machine. Figures are medians, ranges in parentheses.',
  '',
];
for (const s of run.scenarios) out.push(renderScenario(s), `(${s.seconds} s)`, '');
const met = run.scenarios.flatMap((s) => s.targets.map((t) => `${t.met ? 'met' : 'not met'}: ${t.name}`));
if (met.length > 0) out.push('Targets:', '', ...met.map((t) => `- ${t}`), '');
process.stdout.write(out.join('\n'));
