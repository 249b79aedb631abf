/** The consumer ceiling: amqplib, prefetch 1,000, manual ack of every message, nothing else. */
import amqp from 'amqplib';
import { PREFETCH } from '../lib/config.js';
import { serveContender } from '../lib/contender-entry.js';

interface Args {
  readonly amqpUrl: string;
  readonly queue: string;
}

serveContender<Args>(async ({ amqpUrl, queue }) => {
  const conn = await amqp.connect(amqpUrl);
  const ch = await conn.createChannel();
  await ch.prefetch(PREFETCH);
  return {
    async run(goArgs) {
      const { messages } = goArgs as { messages: number };
      let acked = 0;
      let done!: () => void;
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
    async close() {
      await conn.close();
    },
  };
});
