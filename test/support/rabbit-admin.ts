import { connect, type Channel, type ChannelModel } from 'amqplib';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { testEnv } from './env.js';

/** A suite's own raw amqplib connection, for declaring and checking what a test needs. */
export interface AdminAmqp {
  readonly connection: ChannelModel;
  /** A channel of this connection: a fresh one per test, or one for the whole suite. */
  readonly channel: Channel;
}

/**
 * Opens the connection before the suite and closes it after; `channel` is opened before each test
 * (a failed declaration closes a channel, not the connection) or, with `perSuite`, once.
 * @example
 * const amqp = adminAmqp();
 * it('declares', async () => amqp.channel.assertQueue(uniqueName('q')));
 */
export function adminAmqp(options: { perSuite?: boolean } = {}): AdminAmqp {
  let connection: ChannelModel | undefined;
  let channel: Channel | undefined;
  beforeAll(async () => {
    connection = await connect(testEnv.amqpUrl);
    connection.on('error', () => undefined);
    if (options.perSuite) channel = await connection.createChannel();
  });
  afterAll(async () => {
    await connection?.close().catch(() => undefined);
  });
  if (!options.perSuite)
    beforeEach(async () => {
      channel = await connection!.createChannel();
      channel.on('error', () => undefined);
    });
  return {
    get connection() {
      if (!connection) throw new Error('the admin connection is opened before the suite');
      return connection;
    },
    get channel() {
      if (!channel) throw new Error('the admin channel is opened before each test');
      return channel;
    },
  };
}
