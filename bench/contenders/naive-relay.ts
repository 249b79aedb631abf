/**
 * The relay a user writes by hand, on a table of their own: in one transaction, claim 500 pending rows
 * with FOR UPDATE SKIP LOCKED, publish them on a confirm channel, wait for the confirms, mark them sent,
 * commit; repeat until none is pending. See naive-outbox.ts for the table.
 */
import amqp from 'amqplib';
import pg from 'pg';
import { serveContender } from '../lib/contender-entry.js';

interface Args {
  readonly pgUrl: string;
  readonly amqpUrl: string;
  readonly exchange: string;
  readonly table: string;
}

serveContender<Args>(async ({ pgUrl, amqpUrl, exchange, table }) => {
  const pool = new pg.Pool({ connectionString: pgUrl });
  const conn = await amqp.connect(amqpUrl);
  const ch = await conn.createConfirmChannel();
  const claim = `SELECT id, message_id, topic, payload FROM ${table}
    WHERE sent_at IS NULL ORDER BY id LIMIT 500 FOR UPDATE SKIP LOCKED`;
  const mark = `UPDATE ${table} SET sent_at = now() WHERE id = ANY($1)`;
  return {
    async run() {
      let sent = 0;
      const client = await pool.connect();
      try {
        for (;;) {
          await client.query('BEGIN');
          const { rows } = await client.query<{ id: string; message_id: string; topic: string; payload: unknown }>(
            claim,
          );
          if (rows.length === 0) {
            await client.query('COMMIT');
            break;
          }
          for (const r of rows) {
            ch.publish(exchange, r.topic, Buffer.from(JSON.stringify(r.payload)), {
              persistent: true,
              mandatory: true,
              messageId: r.message_id,
              contentType: 'application/json',
            });
          }
          await ch.waitForConfirms();
          await client.query(mark, [rows.map((r) => r.id)]);
          await client.query('COMMIT');
          sent += rows.length;
        }
      } finally {
        client.release();
      }
      return { sent };
    },
    async close() {
      await conn.close();
      await pool.end();
    },
  };
});
