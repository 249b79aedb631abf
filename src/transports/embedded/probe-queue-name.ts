/** What a queue name given to the embedded probe stands for. */
export interface ProbedQueue {
  readonly group: string;
  /** Undefined: every topic of the group. */
  readonly topic: string | undefined;
}

/**
 * The embedded log's counterpart of a broker queue: one consumer group on one topic, named
 * `<topic>@<group>`.
 * @example
 * embeddedQueueName('orders.created', 'billing'); // 'orders.created@billing'
 */
export function embeddedQueueName(topic: string, group: string): string {
  return `${topic}@${group}`;
}

/**
 * `<topic>@<group>` names one pair; a name without `@` names a whole group, the way a RabbitMQ
 * queue is by default one group's queue for all its topics. Split at the last `@`, so a topic may
 * contain `@` and a group may not.
 */
export function parseProbedQueue(name: string): ProbedQueue {
  const at = name.lastIndexOf('@');
  if (at <= 0 || at === name.length - 1) return { group: name, topic: undefined };
  return { group: name.slice(at + 1), topic: name.slice(0, at) };
}
