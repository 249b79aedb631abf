import { Admin } from '@platformatic/kafka';
import { declareTopics } from '../../src/transports/kafka/index.js';
import { testEnv } from './env.js';

const bootstrapBrokers = () => testEnv.kafkaBrokers.map((b) => b.replace(/^kafka:\/\//, ''));

/** An admin client of the test broker, for creating and deleting a test's topics. */
export function kafkaAdmin(): Admin {
  return new Admin({ clientId: 'surety-test-admin', bootstrapBrokers: bootstrapBrokers(), autocreateTopics: false });
}

/** Creates `topic` with `partitions` partitions if it is missing. */
export async function createTestTopic(admin: Admin, topic: string, partitions = 1): Promise<void> {
  await declareTopics(admin as never, { topics: [{ name: topic, partitions, replicationFactor: 1, configs: {} }] });
}

/** Deletes the topics that exist among `topics`, and the consumer groups among `groups`; tolerates either missing. */
export async function deleteTestTopics(
  admin: Admin,
  topics: Iterable<string>,
  groups: Iterable<string> = [],
): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const gone = [...topics].filter((t) => existing.has(t));
  if (gone.length) await admin.deleteTopics({ topics: gone }).catch(() => undefined);
  const groupIds = [...groups];
  if (groupIds.length) await admin.deleteGroups({ groups: groupIds }).catch(() => undefined);
}
