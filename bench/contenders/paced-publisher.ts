/**
 * The broker hop alone, publishing side: amqplib on a confirm channel, 1 KiB persistent mandatory
 * messages at a steady rate, no database. The time returned for each message is when its publish was
 * handed to amqplib, the analogue of a commit returning: what follows is the hop. Confirms are not
 * awaited one by one (that would put their round trip before the recorded time, or serialise the
 * publishes); the run ends once every publish is confirmed.
 */
import amqp from 'amqplib';
import { PAYLOAD, TYPE } from '../lib/config.js';
import { serveContender } from '../lib/contender-entry.js';
import { atPace } from '../lib/pace.js';

interface Args {
  readonly amqpUrl: string;
  readonly exchange: string;
  /** Prefixes each message id, unique across runs on one queue. */
  readonly runTag: string;
}

serveContender<Args>(async ({ amqpUrl, exchange, runTag }) => {
  const conn = await amqp.connect(amqpUrl);
  const ch = await conn.createConfirmChannel();
  const body = Buffer.from(JSON.stringify(PAYLOAD));
  let returned = 0; // mandatory messages the broker could not route
  ch.on('return', () => returned++);
  return {
    async run(goArgs) {
      const { messages, rate } = goArgs as { messages: number; rate: number };
      let confirmed = 0;
      let failure: unknown;
      let i = 0;
      const committedAt = await atPace(rate, messages, async () => {
        const messageId = `${runTag}-${i++}`;
        const options = { persistent: true, mandatory: true, messageId, contentType: 'application/json' };
        // At this rate amqplib's write buffer never fills: publish's boolean is not waited on.
        ch.publish(exchange, TYPE, body, options, (err) => {
          if (err) failure ??= err;
          else confirmed++;
        });
        return messageId; // atPace records the time as this resolves
      });
      await ch.waitForConfirms(); // rejects if any publish was nacked
      if (failure) throw failure;
      if (returned > 0) throw new Error(`${returned} messages returned unroutable from ${exchange}`);
      if (confirmed !== messages) throw new Error(`${confirmed} publishes confirmed, expected ${messages}`);
      return { committedAt };
    },
    async close() {
      await conn.close();
    },
  };
});
