import { describeError, PublishError } from '../../core/errors.js';
import type { OutgoingMessage } from '../../ports/transport.js';
import { ChannelKeeper } from './channel-keeper.js';
import { channelRefusal, type ChannelRefusal } from './channel-refusal.js';
import { ConfirmTracker, type PendingPublish } from './confirm-tracker.js';
import type { ConnectionManager } from './connection.js';
import type { AmqpChannel, AmqpMessage } from './driver.js';
import type { ResolvedRabbitMqOptions } from './options.js';
import { assignBlame } from './publish-blame.js';
import { ReadySignal } from './ready-signal.js';
import { UnsettledPublishes } from './unsettled-publishes.js';
import { toPublishOptions } from './wire-mapping.js';

/** How often one publish is republished after channel closes before it fails: nothing loops forever. */
const MAX_REPUBLISHES = 10;

/** Per confirm channel: its confirms, and the publishes it has not written yet. */
interface PublishChannel {
  readonly tracker: ConfirmTracker;
  writable: boolean;
  /** To be written pipelined, in order, once the write buffer drains and no suspect is being probed. */
  readonly held: PendingPublish[];
  heldFrom: number;
  /** Suspects of the last channel's refusal: written one at a time, each after the previous one's confirm. */
  readonly suspects: PendingPublish[];
  /** The suspect written alone, awaiting its confirm. */
  probing: PendingPublish | undefined;
  /** What the broker closed this channel with, if it did (amqplib emits 'error' just before 'close'). */
  refusal: ChannelRefusal | undefined;
}

/** Publishes waiting for the channel that replaces one the broker closed, its connection still up. */
interface Carried {
  readonly suspects: PendingPublish[];
  readonly rest: PendingPublish[];
}

/**
 * Publishes on one confirm channel, pipelined: a publish is written at once and its promise
 * settles when the broker's ack, nack or return for that very message arrives, or on timeout or
 * connection loss. Nothing is buffered while disconnected.
 *
 * RabbitMQ closes the channel when it refuses one publish (a missing exchange, an internal one, a
 * header it rejects), and every confirm the channel owed is lost with it. Then only the publishes to
 * blame fail, with the broker's reply (SURETY_PUBLISH_REFUSED); the others are written again on the
 * channel that replaces it, with a fresh deadline (see {@link assignBlame}). Suspects, when the reply
 * names no exchange, go first and one at a time, until the broker refuses one again.
 */
export class ConfirmPublisher {
  private readonly keeper: ChannelKeeper<PublishChannel>;
  private readonly ready = new ReadySignal();
  private readonly unsettled: UnsettledPublishes;
  private carried: Carried | undefined;
  private blocked = false;
  private closed = false;

  constructor(
    private readonly manager: ConnectionManager,
    private readonly options: ResolvedRabbitMqOptions,
  ) {
    this.unsettled = new UnsettledPublishes(options.publishTimeoutMs, (p) =>
      this.settle(
        p,
        new PublishError(
          'SURETY_PUBLISH_TIMEOUT',
          `broker did not confirm message ${p.out.message.id} within ${options.publishTimeoutMs} ms`,
        ),
      ),
    );
    this.keeper = new ChannelKeeper(manager, options, {
      label: 'publisher',
      create: (connection) => connection.createConfirmChannel(),
      setup: async (channel) => this.setup(channel),
      opened: (channel, state) => this.opened(channel, state),
      lost: (_channel, state) => this.channelClosed(state),
    });
  }

  start(): void {
    this.manager.onLost(() => this.dropCarried());
    this.manager.onBlocked((blocked) => {
      this.blocked = blocked;
      this.updateReady();
    });
    this.keeper.run();
  }

  isReady(): boolean {
    return this.ready.isSet;
  }

  waitUntilReady(timeoutMs: number): Promise<boolean> {
    return this.closed ? Promise.resolve(false) : this.ready.wait(timeoutMs);
  }

  publish(out: OutgoingMessage): Promise<void> {
    if (this.closed)
      return Promise.reject(new PublishError('SURETY_TRANSPORT_CLOSED', 'the RabbitMQ transport is closed'));
    const active = this.keeper.current;
    const carried = this.carried;
    if (!active && !carried)
      return Promise.reject(
        new PublishError('SURETY_CONNECTION_LOST', 'not connected to RabbitMQ (publishes are not buffered)'),
      );
    return new Promise<void>((resolve, reject) => {
      const pending: PendingPublish = {
        out,
        deadline: Date.now() + this.options.publishTimeoutMs,
        exchange: '',
        routingKey: '',
        returned: false,
        republished: 0,
        settled: false,
        resolve,
        reject,
      };
      this.unsettled.add(pending);
      if (!active)
        carried!.rest.push(pending); // the replacement channel is on its way
      else if (this.writesNow(active.state)) this.write(active.channel, active.state, pending);
      else active.state.held.push(pending);
    });
  }

  /** Waits (bounded) for in-flight confirms, rejects what is left, then closes the channel. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.updateReady();
    await this.unsettled.whenIdle(this.options.closeTimeoutMs);
    for (const p of this.unsettled.list())
      this.settle(
        p,
        new PublishError('SURETY_TRANSPORT_CLOSED', 'the RabbitMQ transport closed before the broker confirmed'),
      );
    this.carried = undefined;
    await this.keeper.stop();
  }

  private async setup(channel: AmqpChannel): Promise<PublishChannel> {
    const state: PublishChannel = {
      tracker: new ConfirmTracker((p, err) => {
        this.settle(p, err);
        if (p === state.probing) this.probeNext(channel, state);
      }),
      writable: true,
      held: [],
      heldFrom: 0,
      suspects: [],
      probing: undefined,
      refusal: undefined,
    };
    channel.on('error', (err: unknown) => {
      state.refusal = channelRefusal(err);
    });
    channel.on('ack', (f: { deliveryTag: number; multiple: boolean }) =>
      state.tracker.acked(f.deliveryTag, f.multiple),
    );
    channel.on('nack', (f: { deliveryTag: number; multiple: boolean }) =>
      state.tracker.nacked(f.deliveryTag, f.multiple),
    );
    channel.on('return', (msg: AmqpMessage) => {
      const { exchange, routingKey } = msg.fields;
      if (!state.tracker.returned({ exchange, routingKey, messageId: msg.properties.messageId })) {
        this.options.logger.warn(
          { messageId: msg.properties.messageId },
          'rabbitmq returned a message no publish is waiting for',
        );
      }
    });
    channel.on('drain', () => {
      state.writable = true;
      this.writeHeld(channel, state);
    });
    return state;
  }

  /** A new channel takes over what the one the broker closed left: suspects first, one at a time. */
  private opened(channel: AmqpChannel, state: PublishChannel): void {
    const carried = this.carried;
    this.carried = undefined;
    if (carried) {
      state.suspects.push(...carried.suspects);
      state.held.push(...carried.rest);
    }
    this.updateReady();
    if (state.suspects.length > 0) this.probeNext(channel, state);
    else this.writeHeld(channel, state);
  }

  private writesNow(state: PublishChannel): boolean {
    return state.writable && state.probing === undefined && state.heldFrom === state.held.length;
  }

  private write(channel: AmqpChannel, state: PublishChannel, pending: PendingPublish): void {
    const { topic, message } = pending.out;
    if (pending.republished > 0) this.unsettled.renew(pending);
    try {
      const { exchange, routingKey } = this.options.route(topic);
      state.writable = channel.publish(exchange, routingKey, message.body, toPublishOptions(message));
      pending.exchange = exchange;
      pending.routingKey = routingKey;
    } catch (err) {
      // amqplib throws IllegalOperationError once the channel is closing; anything else is this message's fault.
      const closing = (err as { name?: unknown }).name === 'IllegalOperationError';
      this.settle(
        pending,
        closing
          ? new PublishError('SURETY_CONNECTION_LOST', 'the RabbitMQ channel is closing', { cause: err })
          : new PublishError(
              'SURETY_PUBLISH_NACKED',
              `message ${message.id} could not be sent: ${describeError(err)}`,
              { cause: err },
            ),
      );
      return;
    }
    state.tracker.sent(pending);
  }

  /** Writes the next suspect alone; once none is left, what was held meanwhile. */
  private probeNext(channel: AmqpChannel, state: PublishChannel): void {
    state.probing = undefined;
    for (let next = state.suspects.shift(); next; next = state.suspects.shift()) {
      if (next.settled) continue;
      state.probing = next;
      this.write(channel, state, next);
      if (!next.settled) return; // its confirm calls this again
      state.probing = undefined;
    }
    this.writeHeld(channel, state);
  }

  /** Writes held publishes until the buffer fills again; confirms of earlier ones keep flowing meanwhile. */
  private writeHeld(channel: AmqpChannel, state: PublishChannel): void {
    if (state.probing) return;
    while (state.writable && state.heldFrom < state.held.length) {
      const pending = state.held[state.heldFrom++]!;
      if (!pending.settled) this.write(channel, state, pending);
    }
    if (state.heldFrom === state.held.length) {
      state.held.length = 0;
      state.heldFrom = 0;
    }
  }

  /**
   * The channel closed, and with it every confirm it owed. Closed by the broker: the publishes to
   * blame fail and the rest wait for the next channel, which is opened at once when a publish caused
   * the close (returns true). Closed with its connection: every publish it had fails.
   */
  private channelClosed(state: PublishChannel): boolean {
    const refusal = state.refusal;
    if (!refusal) {
      this.failChannel(state);
      return false;
    }
    const blame = assignBlame(refusal, state.tracker.takeUnconfirmed());
    for (const p of blame.refused) this.settle(p, refused(p, refusal));
    const carried: Carried = { suspects: [], rest: [] };
    this.carryWritten(carried.suspects, blame.suspects, refusal);
    this.carryWritten(carried.rest, blame.innocent, refusal);
    // Suspects never written: still suspects, unless this channel's close was pinned on one of them.
    const unprobed = state.suspects.splice(0).filter((p) => !p.settled);
    (blame.refused.length > 0 ? carried.rest : carried.suspects).push(...unprobed);
    carried.rest.push(...state.held.slice(state.heldFrom).filter((p) => !p.settled));
    state.held.length = 0;
    state.heldFrom = 0;
    this.carried = carried;
    this.updateReady();
    return refusal.byPublish;
  }

  /** Written publishes the broker never confirmed, to be written again with a fresh deadline, each a bounded number of times. */
  private carryWritten(into: PendingPublish[], publishes: readonly PendingPublish[], refusal: ChannelRefusal): void {
    for (const p of publishes) {
      if (++p.republished > MAX_REPUBLISHES) {
        this.settle(
          p,
          new PublishError(
            'SURETY_CONNECTION_LOST',
            `the RabbitMQ channel closed ${p.republished} times before the broker confirmed message ${p.out.message.id} (last: ${refusal.replyText})`,
            { cause: refusal.cause },
          ),
        );
        continue;
      }
      p.returned = false; // its return, if any, is answered again on the next channel
      this.unsettled.renew(p);
      into.push(p);
    }
  }

  /** The connection went: publishes waiting for a replacement channel fail, as any in flight did. */
  private dropCarried(): void {
    const carried = this.carried;
    if (!carried) return;
    this.carried = undefined;
    this.updateReady();
    for (const p of [...carried.suspects, ...carried.rest]) this.settle(p, channelLost());
  }

  /** The channel is gone with its connection, and with it every confirm it owed: reject all its publishes. */
  private failChannel(state: PublishChannel): void {
    this.updateReady();
    state.tracker.failAll(channelLost);
    for (let i = state.heldFrom; i < state.held.length; i++) this.settle(state.held[i]!, channelLost());
    for (const p of state.suspects) this.settle(p, channelLost());
    state.held.length = 0;
    state.heldFrom = 0;
    state.suspects.length = 0;
  }

  private settle(pending: PendingPublish, err?: PublishError): void {
    if (pending.settled) return;
    pending.settled = true;
    this.unsettled.delete(pending);
    if (err) pending.reject(err);
    else pending.resolve();
  }

  /** Ready with a channel, and while the broker's close of one is being replaced (the connection is up). */
  private updateReady(): void {
    const channel = this.keeper.current !== undefined || this.carried !== undefined;
    this.ready.set(!this.closed && !this.blocked && channel);
  }
}

const channelLost = (): PublishError =>
  new PublishError('SURETY_CONNECTION_LOST', 'the RabbitMQ channel closed before the broker confirmed');

function refused(p: PendingPublish, refusal: ChannelRefusal): PublishError {
  const { message, topic } = p.out;
  const text = `RabbitMQ refused message ${message.id} to "${topic}": ${refusal.replyText}`;
  return new PublishError('SURETY_PUBLISH_REFUSED', text, { cause: refusal.cause });
}
