/**
 * NATS JetStream's ceiling: `js.publish` of 1 KiB messages, each with its Nats-Msg-Id (the stream
 * dedupes on it, as for Surety's), at most 1,000 without their PubAck. The ids are new each run: a
 * purge keeps the stream's dedupe window, and a rerun within it would be stored as nothing.
 */
import { randomUUID } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { PAYLOAD, TYPE } from '../lib/config.js';
import { serveContender } from '../lib/contender-entry.js';
import { sendWindowed } from '../lib/windowed.js';

interface Args {
  readonly natsUrl: string;
  readonly subjectPrefix: string;
  readonly messages: number;
}

serveContender<Args>(async ({ natsUrl, subjectPrefix, messages }) => {
  const nc = await connect({ servers: natsUrl, name: 'bench-raw-nats' });
  const js = jetstream(nc);
  const subject = `${subjectPrefix}.${TYPE}`;
  const run = randomUUID();
  const body = Buffer.from(JSON.stringify(PAYLOAD));
  return {
    async run() {
      let duplicates = 0;
      const streams = new Set<string>();
      const sent = await sendWindowed(messages, 1, 1_000, async (i) => {
        const ack = await js.publish(subject, body, { msgID: `${run}-${i}` });
        if (ack.duplicate) duplicates++;
        streams.add(ack.stream);
      });
      return { sent, duplicates, streams: [...streams] };
    },
    async close() {
      await nc.close();
    },
  };
});
