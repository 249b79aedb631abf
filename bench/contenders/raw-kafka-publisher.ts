/**
 * Kafka's ceiling: @platformatic/kafka's idempotent producer (acks=all), batches of 500 1 KiB
 * records, one `send` at a time, which is all this client allows: given several at once (1.35), it
 * numbers each batch from the same sequence, the broker stores the first and acknowledges the others
 * as duplicates of it, and their records are lost while every `send` resolves (2,000 sent in four
 * sends, 500 stored). Surety's transport sends one request at a time for the same reason.
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
const DEPTH = 1;

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
