#!/usr/bin/env node
// Makes sure the services the test suites talk to are answering, starting local ones that are installed but down.
// Run by `npm test` and `npm run bench`; see DEVELOPERS.md. One module per service in scripts/services/.
//
//   SURETY_SERVICES=postgres,rabbitmq           which services to check (default: all of them)
//   SURETY_SKIP_SERVICES=1                      skip every check (tests point at hosts you manage yourself)
//   SURETY_TEST_PG_URL / SURETY_TEST_MYSQL_URL / SURETY_TEST_AMQP_URL / SURETY_TEST_REDIS_URL / SURETY_TEST_NATS_URL /
//   SURETY_TEST_KAFKA_BROKERS                   where the tests connect; checked here too
//   SURETY_CHROMIUM                             the browser the console's tests drive (default /usr/bin/chromium);
//                                               only reported here, never installed
import { reportChromium } from './services/chromium.mjs';
import { ensure } from './services/ensure.mjs';
import { kafka } from './services/kafka.mjs';
import { mariadb } from './services/mariadb.mjs';
import { nats } from './services/nats.mjs';
import { postgres } from './services/postgres.mjs';
import { rabbitmq } from './services/rabbitmq.mjs';
import { redis } from './services/redis.mjs';
import { cleanScratch } from './services/tools.mjs';

const SERVICES = { postgres, mariadb, mysql: mariadb, rabbitmq, redis, nats, kafka };
const ALL = 'postgres,mariadb,rabbitmq,redis,nats,kafka';

async function main() {
  await reportChromium();
  if (/^(1|true|yes)$/i.test(process.env.SURETY_SKIP_SERVICES ?? '')) {
    console.log('services: check skipped (SURETY_SKIP_SERVICES is set)');
    return 0;
  }
  const names = (process.env.SURETY_SERVICES ?? ALL)
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (!names.length) {
    console.log('services: none requested (SURETY_SERVICES is empty)');
    return 0;
  }
  const unknown = names.filter((n) => !(n in SERVICES));
  if (unknown.length) {
    console.error(`SURETY_SERVICES: unknown service ${unknown.join(', ')}; allowed: ${ALL}, mysql (for mariadb)`);
    return 2;
  }
  let services;
  try {
    services = [...new Set(names.map((n) => SERVICES[n]))].map((make) => make());
  } catch (error) {
    console.error(`services: bad connection URL: ${error.message}`);
    return 2;
  }
  // Check (and start) all at once; report in the order given.
  const results = services.map((svc) =>
    ensure(svc).then(
      (line) => ({ line }),
      (error) => ({ error }),
    ),
  );
  let failed = 0;
  for (const result of results) {
    const { line, error } = await result;
    if (error) {
      failed += 1;
      console.error(error.message);
    } else {
      console.log(line);
    }
  }
  return failed ? 1 : 0;
}

try {
  process.exitCode = await main();
} finally {
  cleanScratch();
}
