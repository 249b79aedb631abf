/**
 * The consumer ceiling: amqplib, prefetch 1,000, manual ack of every message, nothing else. `go`
 * resolves once `messages` were acked. With `record` (the broker hop alone, end to end), it consumes
 * from set-up on, so that its subscription is in place before the publisher starts, and returns when
 * each message id was first received (or, told to finish, what arrived by then).
 */
import amqp from 'amqplib';
import { PREFETCH } from '../lib/config.js';
import { serveContender } from '../lib/contender-entry.js';
import { now } from '../lib/pace.js';

interface Args {
  readonly amqpUrl: string;
  readonly queue: string;
  readonly record?: boolean;
}

serveContender<Args>(async ({ amqpUrl, queue, record }) => {
  const conn = await amqp.connect(amqpUrl);
  const ch = await conn.createChannel();
  await ch.prefetch(PREFETCH);
  let done = () => {};
  if (record) {
    const handledAt = new Map<string, number>();
    let target = Infinity;
    await ch.consume(queue, (msg) => {
      if (!msg) return;
      const id = String(msg.properties.messageId);
      if (!handledAt.has(id)) handledAt.set(id, now());
      ch.ack(msg);
      if (handledAt.size >= target) done();
    });
    return {
      async run(goArgs) {
        const finished = new Promise<void>((r) => (done = r));
        target = (goArgs as { messages: number }).messages;
        if (handledAt.size >= target) done();
        await finished;
        return { handledAt: [...handledAt] };
      },
      finish: () => done(), // report what arrived: the rest never did in time
      async close() {
        await conn.close();
      },
    };
  }
  return {
    async run(goArgs) {
      const { messages } = goArgs as { messages: number };
      let acked = 0;
      const finished = new Promise<void>((r) => (done = r));
      const { consumerTag } = await ch.consume(queue, (msg) => {
        if (!msg) return;
        ch.ack(msg);
        if (++acked === messages) done();
      });
      await finished;
      await ch.cancel(consumerTag);
      return { acked };
    },
    finish: () => done(),
    async close() {
      await conn.close();
    },
  };
});
