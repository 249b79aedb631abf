import type { KafkaAdmin } from './driver.js';

/** A topic setting that puts acknowledged messages at risk, for the doctor to warn about. */
export interface SettingRisk {
  readonly topic: string;
  readonly setting: string;
  readonly value: string;
  readonly why: string;
}

/** DescribeConfigs resource type of a topic. */
const TOPIC_RESOURCE = 2;

/**
 * The risky settings of `topic`: a replication factor of 1 (one broker's disk is the only copy),
 * `min.insync.replicas` of 1 (acks=all is then satisfied by the leader alone) and unclean leader
 * election (an out-of-sync replica may become leader and drop acknowledged writes). Surety's own
 * client settings are safe by construction: acks=all, idempotence on, auto commit off.
 */
export async function topicRisks(admin: KafkaAdmin, topic: string): Promise<SettingRisk[]> {
  const meta = (await admin.metadata({ topics: [topic] })).topics.get(topic);
  const [described] = await admin.describeConfigs({
    resources: [
      {
        resourceType: TOPIC_RESOURCE,
        resourceName: topic,
        configurationKeys: ['min.insync.replicas', 'unclean.leader.election.enable'],
      },
    ],
  });
  const config = new Map((described?.configs ?? []).map((c) => [c.name, c.value ?? '']));
  const risks: SettingRisk[] = [];
  const replicas = Math.min(...(meta?.partitions ?? []).map((p) => p.replicas.length));
  if (Number.isFinite(replicas) && replicas < 2)
    risks.push({
      topic,
      setting: 'replication.factor',
      value: String(replicas),
      why: 'one copy only: losing that broker loses acknowledged messages (fine in tests, not in production)',
    });
  if (config.get('min.insync.replicas') === '1' && replicas >= 2)
    risks.push({
      topic,
      setting: 'min.insync.replicas',
      value: '1',
      why: 'acks=all is satisfied by the leader alone; set it to replication factor - 1',
    });
  if (config.get('unclean.leader.election.enable') === 'true')
    risks.push({
      topic,
      setting: 'unclean.leader.election.enable',
      value: 'true',
      why: 'an out-of-sync replica may become leader and drop acknowledged messages',
    });
  return risks;
}
