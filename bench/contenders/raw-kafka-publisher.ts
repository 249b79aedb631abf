/**
 * Kafka's ceiling: @platformatic/kafka's idempotent producer (acks=all), batches of 500 1 KiB
 * records, four batches handed to it at once. An idempotent producer has one request in flight per
 * connection (the client forces it), so the others wait in its queue, ready as soon as it returns.
 */
import { Producer } from '@platformatic/kafka';
import { PAYLOAD } from '../lib/config.js';
import { serveContender } from '../lib/contender-entry.js';
import { sendWindowed } from '../lib/windowed.js';

interface Args {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly messages: number;
}

const BATCH = 500; // 500 KiB: below the broker's 1 MiB per batch
const DEPTH = 4;

serveContender<Args>(async ({ brokers, topic, messages }) => {
  const producer = new Producer({
    clientId: 'bench-raw-kafka',
    bootstrapBrokers: [...brokers],
    idempotent: true,
    acks: -1,
    autocreateTopics: false,
  });
  const value = Buffer.from(JSON.stringify(PAYLOAD));
  await producer.metadata({ topics: [topic] }); // connected and the topic known before the clock starts
  return {
    async run() {
      const sent = await sendWindowed(messages, BATCH, DEPTH, async (first, count) => {
        const records = Array.from({ length: count }, (_, i) => ({
          topic,
          value,
          headers: new Map([[Buffer.from('id'), Buffer.from(String(first + i))]]),
        }));
        await producer.send({ messages: records });
      });
      return { sent };
    },
    async close() {
      await producer.close();
    },
  };
});
