/** NATS JetStream: a file stream of the scenario's own on `<tag>.>`, purged between runs, deleted at the end. */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { declareTopology } from '../../../src/transports/nats/index.js';
import { NATS_URL } from '../config.js';
import type { BrokerTarget } from './target.js';

export async function natsTarget(tag: string): Promise<BrokerTarget> {
  const nc = await connect({ servers: NATS_URL, name: 'bench-admin' });
  const jsm = await jetstreamManager(nc);
  const stream = tag;
  // Declared as the relay's transport declares it (lib/broker-transport.ts): its declaration changes nothing.
  await declareTopology(jsm, { streams: [{ name: stream, subjects: [`${tag}.>`] }] });
  const args = { natsUrl: NATS_URL, subjectPrefix: tag };
  return {
    kind: 'nats',
    title: 'NATS JetStream, file stream',
    raw: { contender: 'raw-nats-publisher', label: '@nats-io/jetstream, 1,000 in flight' },
    async prepare() {
      await jsm.streams.purge(stream);
      return { transport: { broker: 'nats', ...args, stream }, raw: args };
    },
    async held() {
      return (await jsm.streams.info(stream)).state.messages;
    },
    async close() {
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    },
  };
}
