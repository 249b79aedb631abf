import { describeError, PublishError } from '../../core/errors.js';
import type { OutgoingMessage } from '../../ports/transport.js';
import { ChannelKeeper } from './channel-keeper.js';
import { ConfirmTracker, type PendingPublish } from './confirm-tracker.js';
import type { ConnectionManager } from './connection.js';
import type { AmqpChannel, AmqpMessage } from './driver.js';
import type { ResolvedRabbitMqOptions } from './options.js';
import { ReadySignal } from './ready-signal.js';
import { toPublishOptions } from './wire-mapping.js';

/** Per confirm channel: its confirms, and the publishes held back while its write buffer drains. */
interface PublishChannel {
  readonly tracker: ConfirmTracker;
  writable: boolean;
  readonly held: PendingPublish[];
  heldFrom: number;
}

/**
 * Publishes on one confirm channel, pipelined: a publish is written at once and its promise
 * settles when the broker's ack, nack or return for that very message arrives, or on timeout or
 * channel loss. Nothing is buffered while disconnected.
 */
export class ConfirmPublisher {
  private readonly keeper: ChannelKeeper<PublishChannel>;
  private readonly ready = new ReadySignal();
  /** Every unsettled publish, in publish order, which is also deadline order. */
  private readonly unsettled = new Set<PendingPublish>();
  private timer: NodeJS.Timeout | undefined;
  private idleWaiters: Array<() => void> = [];
  private blocked = false;
  private closed = false;
  /** Channels replaced since the last ack, for the log. */
  private replacedInARow = 0;

  constructor(
    private readonly manager: ConnectionManager,
    private readonly options: ResolvedRabbitMqOptions,
  ) {
    this.keeper = new ChannelKeeper(manager, options, {
      label: 'publisher',
      create: (connection) => connection.createConfirmChannel(),
      setup: async (channel) => this.setup(channel),
      opened: () => this.updateReady(),
      lost: (_channel, state) => this.failChannel(state),
    });
  }

  start(): void {
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
    if (!active)
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
        settled: false,
        resolve,
        reject,
      };
      this.unsettled.add(pending);
      this.timer ??= this.armTimer(pending.deadline);
      const state = active.state;
      if (state.writable && state.heldFrom === state.held.length) this.write(active.channel, state, pending);
      else state.held.push(pending);
    });
  }

  /** Waits (bounded) for in-flight confirms, rejects what is left, then closes the channel. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.updateReady();
    await this.whenIdle(this.options.closeTimeoutMs);
    for (const p of this.unsettled)
      this.settle(
        p,
        new PublishError('SURETY_TRANSPORT_CLOSED', 'the RabbitMQ transport closed before the broker confirmed'),
      );
    await this.keeper.stop();
  }

  private async setup(channel: AmqpChannel): Promise<PublishChannel> {
    const state: PublishChannel = {
      tracker: new ConfirmTracker((p, err) => this.settle(p, err)),
      writable: true,
      held: [],
      heldFrom: 0,
    };
    channel.on('ack', (f: { deliveryTag: number; multiple: boolean }) => {
      this.replacedInARow = 0;
      state.tracker.acked(f.deliveryTag, f.multiple);
    });
    let replacing = false;
    channel.on('nack', (f: { deliveryTag: number; multiple: boolean }) => {
      state.tracker.nacked(f.deliveryTag, f.multiple);
      if (replacing || !state.tracker.onlyNacked) return;
      replacing = true;
      // While a quorum queue lacks a majority every new channel is nacked too: say so once.
      const level = this.replacedInARow++ === 0 ? 'warn' : 'debug';
      this.options.logger[level]({}, 'rabbitmq nacked every publish on a new channel; replacing it');
      // The keeper opens another; the publishes still in flight here fail with SURETY_CONNECTION_LOST.
      void Promise.resolve()
        .then(() => channel.close())
        .catch(() => {});
    });
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

  private write(channel: AmqpChannel, state: PublishChannel, pending: PendingPublish): void {
    const { topic, message } = pending.out;
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

  /** Writes held publishes until the buffer fills again; confirms of earlier ones keep flowing meanwhile. */
  private writeHeld(channel: AmqpChannel, state: PublishChannel): void {
    while (state.writable && state.heldFrom < state.held.length) {
      const pending = state.held[state.heldFrom++]!;
      if (!pending.settled) this.write(channel, state, pending);
    }
    if (state.heldFrom === state.held.length) {
      state.held.length = 0;
      state.heldFrom = 0;
    }
  }

  /** The channel is gone, and with it every confirm it owed: reject all its publishes. */
  private failChannel(state: PublishChannel): void {
    this.updateReady();
    const lost = (): PublishError =>
      new PublishError('SURETY_CONNECTION_LOST', 'the RabbitMQ channel closed before the broker confirmed');
    state.tracker.failAll(lost);
    for (let i = state.heldFrom; i < state.held.length; i++) this.settle(state.held[i]!, lost());
    state.held.length = 0;
    state.heldFrom = 0;
  }

  private settle(pending: PendingPublish, err?: PublishError): void {
    if (pending.settled) return;
    pending.settled = true;
    this.unsettled.delete(pending);
    if (err) pending.reject(err);
    else pending.resolve();
    if (this.unsettled.size > 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const wake of this.idleWaiters) wake();
    this.idleWaiters = [];
  }

  /** One timer for all publishes: deadlines grow in publish order, so only the oldest matters. */
  private armTimer(deadline: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.expire(), Math.max(0, deadline - Date.now()));
    timer.unref();
    return timer;
  }

  private expire(): void {
    this.timer = undefined;
    const now = Date.now();
    for (const p of this.unsettled) {
      if (p.deadline > now) {
        this.timer = this.armTimer(p.deadline);
        return;
      }
      this.settle(
        p,
        new PublishError(
          'SURETY_PUBLISH_TIMEOUT',
          `broker did not confirm message ${p.out.message.id} within ${this.options.publishTimeoutMs} ms`,
        ),
      );
    }
  }

  private whenIdle(timeoutMs: number): Promise<void> {
    if (this.unsettled.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private updateReady(): void {
    this.ready.set(!this.closed && !this.blocked && this.keeper.current !== undefined);
  }
}
