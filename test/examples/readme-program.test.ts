import { connect } from 'amqplib';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { testEnv, uniqueName } from '../support/env.js';
import { exited, spawnTs } from '../support/spawn.js';

describe("the README's PostgreSQL and RabbitMQ program", () => {
  it('starts its consumer right after creating the transport, handles an order, and exits by itself after its shutdown', async () => {
    const schema = uniqueName('readme');
    const exchange = uniqueName('readme_orders');
    const queue = uniqueName('readme_billing');
    const pool = new pg.Pool({ connectionString: testEnv.postgresUrl, max: 1 });
    const amqp = await connect(testEnv.amqpUrl);
    const ch = await amqp.createChannel();
    try {
      const child = spawnTs('support/readme-program.ts', {
        SURETY_PG_URL: testEnv.postgresUrl,
        SURETY_PG_SCHEMA: schema,
        SURETY_AMQP_URL: testEnv.amqpUrl,
        SURETY_EXCHANGE: exchange,
        SURETY_QUEUE: queue,
        SURETY_LOG_LEVEL: 'warn',
      });
      let printedAt = 0;
      child.stdout!.on('data', (d: Buffer) => {
        if (d.toString().includes('invoiced')) printedAt ||= performance.now();
      });
      const end = await Promise.race([
        exited(child),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('the program did not exit within 90 s')), 90_000).unref(),
        ),
      ]).finally(() => child.kill('SIGKILL'));
      const lingered = performance.now() - printedAt;

      expect(end.stderr).toBe('');
      expect(end).toMatchObject({ code: 0, signal: null });
      expect(end.stdout).toMatch(/^invoiced [0-9a-f-]{36} 42\n$/);
      // Its last line comes after pool.end(): nothing it started may keep it alive beyond that.
      expect(lingered).toBeLessThan(3_000);
      console.log(`README program: exited ${Math.round(lingered)} ms after its last line`);
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
      await ch.deleteQueue(queue);
      await ch.deleteExchange(exchange);
      await amqp.close();
    }
  });
});
