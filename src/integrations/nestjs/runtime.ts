import { Consumer } from '../../consumer/consumer.js';
import { InvalidOptionError } from '../../core/errors.js';
import type { ConsumerOptions } from '../../consumer/consumer-options.js';
import { ReplayJob, type ReplayJobOptions } from '../../consumer/replay-job.js';
import { Outbox } from '../../producer/outbox.js';
import { OutboxRelay } from '../../producer/outbox-relay.js';
import type { RelayOptions } from '../../producer/relay-options.js';
import type { Store } from '../../ports/store.js';
import type { Transport } from '../../ports/transport.js';
import { parseModuleOptions, type Source, type SuretyModuleOptions } from './module-options.js';

type Closable<T> = T & { close(): Promise<void> };

/** A resource and whether the module created it (so closes it). */
interface Held<T> {
  readonly value: Closable<T>;
  readonly owned: boolean;
}

async function open<T>(source: Source<Closable<T>>): Promise<Held<T>> {
  return typeof source === 'function' ? { value: await source(), owned: true } : { value: source, owned: false };
}

/**
 * Everything SuretyModule built from its options, started and stopped in dependency order: the relay
 * before the consumers and their replay jobs; stopped the other way round, then the transport and the
 * store closed (only those the module created).
 */
export class SuretyRuntime {
  private started = false;
  private closed = false;

  private constructor(
    private readonly held: { store: Held<Store>; transport: Held<Transport> },
    private readonly migrate: boolean,
    readonly outbox: Outbox,
    readonly relay: OutboxRelay | undefined,
    readonly consumers: ReadonlyMap<string, Consumer>,
    readonly replayJobs: ReadonlyMap<string, ReplayJob>,
  ) {}

  get store(): Store {
    return this.held.store.value;
  }

  get transport(): Transport {
    return this.held.transport.value;
  }

  static async create(input: SuretyModuleOptions): Promise<SuretyRuntime> {
    const o = parseModuleOptions(input);
    const store = await open<Store>(o.store as SuretyModuleOptions['store']);
    let transport: Held<Transport> | undefined;
    try {
      transport = await open<Transport>(o.transport as SuretyModuleOptions['transport']);
      const outbox = new Outbox({ ...o.outbox, store: store.value });
      const relay =
        o.relay === false
          ? undefined
          : new OutboxRelay({
              ...(o.relay as Partial<RelayOptions>),
              store: store.value,
              publisher: transport.value,
              outbox,
            });
      const consumers = new Map<string, Consumer>();
      const replayJobs = new Map<string, ReplayJob>();
      for (const { replay, ...options } of o.consumers) {
        const consumer = new Consumer({
          ...(options as Omit<ConsumerOptions, 'store' | 'transport'>),
          store: store.value,
          transport: transport.value,
        });
        consumers.set(consumer.group, consumer);
        if (replay !== false) replayJobs.set(consumer.group, new ReplayJob(consumer, replay as ReplayJobOptions));
      }
      return new SuretyRuntime({ store, transport }, o.migrate, outbox, relay, consumers, replayJobs);
    } catch (err) {
      await closeOwned([transport, store]);
      throw err;
    }
  }

  /** This runtime, if it has a consumer for each of `groups` (those given tokens of their own); else closes it and throws. */
  async requireGroups(groups: readonly string[]): Promise<this> {
    const missing = groups.find((group) => !this.consumers.has(group));
    if (missing === undefined) return this;
    await this.close();
    throw new InvalidOptionError('SuretyModule.groups', `"${missing}" is not among the consumers`);
  }

  /** Migrates if asked, then starts the relay, the consumers (their handlers registered) and the replay jobs. */
  async start(): Promise<void> {
    this.started = true;
    try {
      if (this.migrate) await this.store.migrate();
      await this.relay?.start();
      for (const consumer of this.consumers.values()) await consumer.start();
      for (const job of this.replayJobs.values()) job.start();
    } catch (err) {
      // Nest does not run shutdown hooks after a failed bootstrap: leave nothing running behind it.
      await this.stop();
      await this.close();
      throw err;
    }
  }

  /** Replay jobs, then consumers (each finishes its batch in hand), then the relay (its confirms in flight). */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await Promise.all([...this.replayJobs.values()].map((job) => job.stop()));
    await Promise.all([...this.consumers.values()].map((consumer) => consumer.stop()));
    await this.relay?.stop();
  }

  /** Closes the transport, then the store: only those the module created. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await closeOwned([this.held.transport, this.held.store]);
  }
}

async function closeOwned(resources: readonly (Held<unknown> | undefined)[]): Promise<void> {
  for (const resource of resources) if (resource?.owned) await resource.value.close();
}
