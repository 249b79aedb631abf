import type { Envelope } from '../core/envelope.js';
import { PoisonMessageError } from '../core/errors.js';
import type { SqlExecutor } from '../ports/sql-executor.js';
import type { VersionGuard } from './version-guard.js';

export interface HandlerContext {
  /** The consumer's open transaction: write your effects here; they commit with the inbox record. */
  readonly tx: SqlExecutor;
  /** The envelope, upcast to the version the handler was registered for. */
  readonly envelope: Envelope;
  readonly group: string;
  /** True when run by the replay job rather than a broker delivery. */
  readonly replay: boolean;
  /** The group's version guards, written in `tx` (see {@link VersionGuard}). */
  readonly versions: VersionGuard;
}

export type Handler<P = unknown> = (payload: P, context: HandlerContext) => Promise<void>;
export type Upcaster = (payload: unknown) => unknown;

/** One message of a batch handler's call: the payload and the envelope it came in (upcast). */
export interface BatchMessage<P = unknown> {
  readonly payload: P;
  readonly envelope: Envelope;
}

export type BatchContext = Omit<HandlerContext, 'envelope'>;

/**
 * Handles consecutive messages of one type in one call, in the consumer's transaction: one
 * multi-row statement instead of one per message. If it throws, every message of the batch is
 * handled again alone (a call with one message) under its own savepoint, so only the failing ones
 * become dead letters.
 */
export type BatchHandler<P = unknown> = (messages: readonly BatchMessage<P>[], context: BatchContext) => Promise<void>;

interface Registration {
  readonly version: number;
  readonly handler: Handler;
  readonly batch?: BatchHandler;
}

/** A handler resolved for one envelope; `batch` is set when the type was registered with `onBatch`. */
export interface Resolved {
  readonly handler: Handler;
  readonly batch?: BatchHandler;
  readonly envelope: Envelope;
}

/** Handlers per message type, and upcasters that lift older payload versions to the handler's. */
export class HandlerRegistry {
  private readonly handlers = new Map<string, Registration>();
  private readonly upcasters = new Map<string, Upcaster>();

  /** Registers the handler of `type`, written for payload `version` (default 1). */
  on<P>(type: string, handler: Handler<P>, options: { version?: number } = {}): this {
    return this.register(type, { version: options.version ?? 1, handler: handler as Handler });
  }

  /** Registers a batch handler of `type` (see {@link BatchHandler}); one message alone is a batch of one. */
  onBatch<P>(type: string, batch: BatchHandler<P>, options: { version?: number } = {}): this {
    const b = batch as BatchHandler;
    const handler: Handler = (payload, { envelope, ...context }) => b([{ payload, envelope }], context);
    return this.register(type, { version: options.version ?? 1, handler, batch: b });
  }

  private register(type: string, registration: Registration): this {
    if (this.handlers.has(type)) throw new TypeError(`a handler for "${type}" is already registered`);
    this.handlers.set(type, registration);
    return this;
  }

  /** Registers how a `type` payload of version `from` becomes version `from + 1`. */
  upcast(type: string, from: number, upcaster: Upcaster): this {
    this.upcasters.set(`${type}@${from}`, upcaster);
    return this;
  }

  get types(): string[] {
    return [...this.handlers.keys()];
  }

  /**
   * The handler and the payload lifted to its version. An unknown type, a version newer than the
   * handler's, or a missing upcaster is a poison message: no retry can fix it.
   */
  resolve(envelope: Envelope): Resolved {
    const reg = this.handlers.get(envelope.type);
    if (!reg) throw new PoisonMessageError(`no handler for message type "${envelope.type}"`);
    if (envelope.version > reg.version) {
      throw new PoisonMessageError(
        `"${envelope.type}" version ${envelope.version} is newer than the handler's version ${reg.version}`,
      );
    }
    let payload = envelope.payload;
    for (let v = envelope.version; v < reg.version; v++) {
      const up = this.upcasters.get(`${envelope.type}@${v}`);
      if (!up) throw new PoisonMessageError(`no upcaster for "${envelope.type}" from version ${v} to ${v + 1}`);
      payload = up(payload);
    }
    return { handler: reg.handler, batch: reg.batch, envelope: { ...envelope, version: reg.version, payload } };
  }
}
