import type { Transport } from '../../src/ports/transport.js';
import { runTransportConformance } from '../conformance/transport-suite.js';
import kafka from '../support/brokers/kafka.js';
import { createTestTopic, kafkaAdmin } from '../support/kafka-admin.js';
import { uniqueName } from '../support/env.js';

/*
 * Checkpoints are per partition: an ack on one partition commits past an unsettled record of
 * another. So topics are single-partition, except those of the tests about volume and per-key
 * order, which get four partitions so that keys are really spread.
 */
const partitionsFor = (topic: string) => (/pipelined|per_key/.test(topic) ? 4 : 1);

runTransportConformance(
  'kafka',
  async () => {
    // One namespace per test: its topics and groups ('g1', 'g2' repeat across tests) are `<ns>.<name>`.
    const ns = uniqueName('conformance');
    const opened: Transport[] = [];
    const open = async (): Promise<Transport> => {
      const transport = await kafka.open(ns);
      opened.push(transport);
      return transport;
    };
    const admin = kafkaAdmin();
    return {
      transport: await open(),
      uniqueTopic: (label) => uniqueName(label),
      prepareTopic: (topic) => createTestTopic(admin, `${ns}.${topic}`, partitionsFor(topic)),
      openAnother: open,
      teardown: async () => {
        await Promise.all(opened.map((t) => t.close()));
        await admin.close();
        await kafka.cleanup(ns);
      },
    };
  },
  {
    unroutableDetection: true, // a topic that does not exist (auto-creation is off)
    persistent: true,
    redeliveryCount: false, // counted in-process only: a new member cannot know
    checkpoint: true,
    orderedPerTopic: false,
    orderedPerKey: true,
    // A cut connection does not end a member's session: the client reconnects, keeps its partitions
    // and its unsettled records, which it may still ack. Nothing comes again, unlike RabbitMQ, so
    // the suite's cut test does not apply; kafka-faults.test.ts tests the cut for what Kafka does.
    connectionCut: false,
  },
);
