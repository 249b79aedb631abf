import { DriverMissingError } from '../../core/errors.js';
import type { NatsConnection, ConnectionOptions, MsgHdrs } from '@nats-io/transport-node';
import type { JetStreamClient, JetStreamManager, JsMsg, StoredMsg } from '@nats-io/jetstream';

/*
 * The NATS client is an optional peer dependency: these are type-only imports, erased at build,
 * and never part of the public declarations. The modules themselves load on first use.
 */
export type { NatsConnection, MsgHdrs, JetStreamClient, JetStreamManager, JsMsg, StoredMsg };

/** What the adapter uses of @nats-io/transport-node and @nats-io/jetstream. */
export interface NatsDriver {
  connect(options: ConnectionOptions): Promise<NatsConnection>;
  headers(): MsgHdrs;
  jetstream(nc: NatsConnection, options?: { timeout?: number }): JetStreamClient;
  jetstreamManager(nc: NatsConnection, options?: { timeout?: number }): Promise<JetStreamManager>;
}

/**
 * Imports the NATS client on first use so that applications without NATS need not install it.
 * `importer` exists for tests.
 */
export async function loadNats(importer: () => Promise<NatsDriver> = importNats): Promise<NatsDriver> {
  try {
    return await importer();
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      throw new DriverMissingError('@nats-io/transport-node @nats-io/jetstream', { cause: err });
    throw err;
  }
}

async function importNats(): Promise<NatsDriver> {
  const [transport, js] = await Promise.all([import('@nats-io/transport-node'), import('@nats-io/jetstream')]);
  return {
    connect: (options) => transport.connect(options),
    headers: () => transport.headers(),
    jetstream: (nc, options) => js.jetstream(nc, options),
    jetstreamManager: (nc, options) => js.jetstreamManager(nc, options),
  };
}
