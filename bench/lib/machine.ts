/** The conditions a run states beside its figures: cores, CPU, and the versions of what ran. */
import { cpus } from 'node:os';
import amqp from 'amqplib';
import pg from 'pg';
import { AMQP_URL, PG_URL } from './config.js';

export async function describeMachine() {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  const postgres = (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
  await client.end();
  const conn = await amqp.connect(AMQP_URL);
  const props = (conn.connection as unknown as { serverProperties?: Record<string, unknown> }).serverProperties;
  await conn.close();
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    postgres,
    rabbitmq: String(props?.version ?? 'unknown'),
  };
}
