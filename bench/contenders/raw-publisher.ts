/**
 * The ceiling: amqplib on a confirm channel with at most 1,000 unconfirmed publishes, 1 KiB persistent
 * messages, no database.
 */
import amqp from 'amqplib';
import { PAYLOAD, TYPE } from '../lib/config.js';
import { serveContender } from '../lib/contender-entry.js';

interface Args {
  readonly amqpUrl: string;
  readonly exchange: string;
  readonly messages: number;
}

serveContender<Args>(async ({ amqpUrl, exchange, messages }) => {
  const conn = await amqp.connect(amqpUrl);
  const ch = await conn.createConfirmChannel();
  const body = Buffer.from(JSON.stringify(PAYLOAD));
  return {
    async run() {
      let inFlight = 0;
      let confirmed = 0;
      let wake: (() => void) | undefined;
      for (let i = 0; i < messages; i++) {
        while (inFlight >= 1_000) await new Promise<void>((r) => (wake = r));
        inFlight++;
        const options = { persistent: true, mandatory: true, messageId: String(i), contentType: 'application/json' };
        ch.publish(exchange, TYPE, body, options, (err) => {
          if (err) throw err;
          inFlight--;
          confirmed++;
          wake?.();
          wake = undefined;
        });
      }
      await ch.waitForConfirms();
      return { sent: confirmed };
    },
    async close() {
      await conn.close();
    },
  };
});
