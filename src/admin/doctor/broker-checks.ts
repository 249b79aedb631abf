import { describeError } from '../../core/errors.js';
import type { BrokerProbe, QueueState } from '../../ports/broker-probe.js';
import { deliveryLimitChecks, parkingCheck } from './delivery-limit-checks.js';
import { count, plural } from './format.js';
import type { DoctorThresholds } from './thresholds.js';
import type { DoctorCheck, DoctorFacts } from './types.js';

const place = 'broker' as const;

/**
 * Each known queue's counts and consumers, then risky settings: durability, what happens past its
 * delivery limit, and its parking queue. Without configured queues, those the probe lists (when it
 * can enumerate them).
 */
export async function brokerChecks(
  probe: BrokerProbe | undefined,
  queues: readonly string[],
  facts: Required<DoctorFacts>,
  t: DoctorThresholds,
): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  if (!facts.persistentPublishing) {
    checks.push({
      id: 'broker.persistence',
      place,
      level: 'warn',
      message:
        'publishing is not persistent (transport.persistent is false) — queued messages are lost when the broker restarts',
      facts: { persistentPublishing: false },
      nextStep: 'publish persistent messages (set transport.persistent to true)',
    });
  }
  if (!probe) return checks;
  let names = queues;
  if (names.length === 0) {
    if (!probe.listQueues) {
      checks.push({
        id: 'broker.queues',
        place,
        level: 'warn',
        message: `no queue is configured, so ${probe.broker} is not checked`,
        facts: { broker: probe.broker },
        nextStep: "list the consumers' queues in transport.queues",
      });
      return checks;
    }
    try {
      names = await probe.listQueues();
    } catch (err) {
      checks.push(unreachable(probe, err));
      return checks;
    }
    checks.push(listedCheck(probe, names));
  }
  const states = new Map<string, QueueState>();
  const inspect = async (name: string): Promise<QueueState | undefined> => {
    if (states.has(name)) return states.get(name);
    try {
      const state = await probe.inspect(name);
      states.set(name, state);
      return state;
    } catch (err) {
      checks.push(unreachable(probe, err));
      return undefined;
    }
  };
  for (const name of names) if (!(await inspect(name))) return checks;
  // Surety's parking queues of the queues checked: their own delivery limit is deliberate.
  const parkingQueues = new Set([...states.values()].map((s) => s.deadLetters?.parkingQueue).filter(Boolean));
  for (const name of names) {
    const state = states.get(name)!;
    checks.push(queueCheck(state, t));
    if (!state.exists) continue;
    checks.push(...durabilityChecks(state), ...deliveryLimitChecks(state, facts, parkingQueues.has(name)));
    checks.push(...probeWarnings(state));
    const parkingQueue = state.deadLetters?.parkingQueue;
    if (parkingQueue) {
      const parking = await inspect(parkingQueue);
      if (!parking) return checks;
      checks.push(parkingCheck(state, parking));
    }
  }
  return checks;
}

function unreachable(probe: BrokerProbe, err: unknown): DoctorCheck {
  return {
    id: 'broker.connection',
    place,
    level: 'fail',
    message: `cannot reach ${probe.broker} at ${probe.address}: ${describeError(err)}`,
    facts: { broker: probe.broker, address: probe.address, error: describeError(err) },
    nextStep: `check that ${probe.broker} is running and reachable from here`,
  };
}

/** No queue configured: the broker's own list stands in, and the report says so. */
function listedCheck(probe: BrokerProbe, names: readonly string[]): DoctorCheck {
  const facts = { broker: probe.broker, listed: names };
  if (names.length === 0) {
    return {
      id: 'broker.queues',
      place,
      level: 'warn',
      message: `no queue is configured and ${probe.broker} knows none — no consumer has run yet`,
      facts,
      nextStep: 'start the consumers, or list their queues in transport.queues',
    };
  }
  return {
    id: 'broker.queues',
    place,
    level: 'ok',
    message: `no queue is configured: checking the ${plural(names.length, 'queue')} ${probe.broker} knows`,
    facts,
  };
}

function queueCheck(q: QueueState, t: DoctorThresholds): DoctorCheck {
  const facts = {
    queue: q.name,
    exists: q.exists,
    ready: q.ready,
    unacked: q.unacked,
    consumers: q.consumers,
    durable: q.durable,
    type: q.type,
    arguments: q.arguments,
    source: q.source,
  };
  const base = { id: 'broker.queue', place, facts };
  if (!q.exists && q.source === 'log') {
    // A log keeps every message; an unknown group has simply never consumed.
    return {
      ...base,
      level: 'fail',
      message: `the log has no record of ${q.name} — its consumer has never run`,
      nextStep: `start the consumer of ${q.name}; it begins at the oldest message in the log`,
    };
  }
  if (!q.exists) {
    return {
      ...base,
      level: 'fail',
      message: `${q.name} does not exist — messages routed to it are dropped or returned unroutable`,
      nextStep: `declare ${q.name} and bind it (the consumer's transport topology does this on start)`,
    };
  }
  const unacked = q.unacked === null ? '' : `, ${count(q.unacked)} unacked`;
  if (q.consumers === 0 && q.ready > 0) {
    return {
      ...base,
      level: 'fail',
      message: `${q.name} has ${count(q.ready)} ready and 0 consumers — the consumer is down`,
      nextStep: `start the consumer of ${q.name}, then watch its ready count fall (\`surety doctor\` again)`,
    };
  }
  if (q.consumers === 0) {
    return {
      ...base,
      level: 'warn',
      message: `${q.name} has no consumer — new messages will wait there`,
      nextStep: `start the consumer of ${q.name}`,
    };
  }
  if (q.ready >= t.queueBacklogWarn) {
    return {
      ...base,
      level: 'warn',
      message: `${q.name} has ${count(q.ready)} ready with ${plural(q.consumers, 'consumer')} — the consumers are falling behind`,
      nextStep: 'add consumer capacity (parallelism, prefetch, instances) or check what slows the handler',
    };
  }
  return {
    ...base,
    level: 'ok',
    message: `${q.name}: ${count(q.ready)} ready${unacked}, ${plural(q.consumers, 'consumer')}`,
  };
}

/** What the probe itself flagged about a queue (e.g. Redis trimming entries a group has not acked). */
function probeWarnings(q: QueueState): DoctorCheck[] {
  return (q.warnings ?? []).map((message) => ({
    id: 'broker.queue-risk',
    place,
    level: 'warn' as const,
    message,
    facts: { queue: q.name, arguments: q.arguments },
    nextStep: `see the ${q.source} transport's documentation on settings the doctor warns about`,
  }));
}

function durabilityChecks(q: QueueState): DoctorCheck[] {
  if (q.durable !== false) return [];
  return [
    {
      id: 'broker.durability',
      place,
      level: 'warn',
      message: `${q.name} is not durable — it and its messages are lost when the broker restarts`,
      facts: { queue: q.name, durable: false },
      nextStep: `recreate ${q.name} as a durable quorum queue (delete it when it is empty, then let the topology declare it)`,
    },
  ];
}
