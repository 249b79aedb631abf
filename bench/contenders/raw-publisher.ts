/**
 * The ceiling: amqplib on a confirm channel with at most 1,000 unconfirmed publishes, 1 KiB persistent
 * messages, no database. With `wire`, each message also carries the properties and header table of
 * Surety's wire format (docs/wire-format.md), so the difference is what that format costs amqplib and
 * the broker.
 */
import amqp from 'amqplib';
import { createEnvelope, encodeEnvelope } from '../../src/index.js';
import { toPublishOptions } from '../../src/transports/rabbitmq/wire-mapping.js';
import { PAYLOAD, TYPE } from '../lib/config.js';
import { serveContender } from '../lib/contender-entry.js';

interface Args {
  readonly amqpUrl: string;
  readonly exchange: string;
  readonly messages: number;
  readonly wire?: boolean;
}

serveContender<Args>(async ({ amqpUrl, exchange, messages, wire }) => {
  const conn = await amqp.connect(amqpUrl);
  const ch = await conn.createConfirmChannel();
  const body = Buffer.from(JSON.stringify(PAYLOAD));
  // One envelope's properties, encoded again by amqplib for every publish; only the id changes.
  const wireOptions = wire ? toPublishOptions(encodeEnvelope(createEnvelope({ type: TYPE, payload: PAYLOAD }))) : {};
  return {
    async run() {
      let inFlight = 0;
      let confirmed = 0;
      let wake: (() => void) | undefined;
      for (let i = 0; i < messages; i++) {
        while (inFlight >= 1_000) await new Promise<void>((r) => (wake = r));
        inFlight++;
        const options = wire
          ? { ...wireOptions, messageId: String(i) }
          : { persistent: true, mandatory: true, messageId: String(i), contentType: 'application/json' };
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
