import type { PgPoolLike } from './executor.js';

/** A pg client as an event emitter of notifications and connection errors. */
interface NotifyingClient {
  on(ev: 'notification', fn: (msg: { channel: string }) => void): void;
  on(ev: 'error', fn: (err: Error) => void): void;
  off(ev: 'notification', fn: (msg: { channel: string }) => void): void;
  off(ev: 'error', fn: (err: Error) => void): void;
}

/**
 * LISTENs on `channel` on a connection of its own from `pool`, calling `onCommit` for each NOTIFY.
 * Resolves to the function that stops listening and gives the connection back.
 */
export async function listenForCommits(
  pool: PgPoolLike,
  channel: string,
  onCommit: () => void,
  onError: (err: unknown) => void,
): Promise<() => Promise<void>> {
  const client = await pool.connect();
  const emitter = client as unknown as NotifyingClient;
  // Errors count only while listening: before, the failing LISTEN itself reports them; after, we closed.
  let listening = false;
  const onNotification = (msg: { channel: string }) => {
    if (msg.channel === channel) onCommit();
  };
  const onClientError = (err: Error) => {
    if (listening) onError(err);
  };
  emitter.on('notification', onNotification);
  emitter.on('error', onClientError);
  // Only our own listeners come off: the pool keeps one of its own on every client.
  const done = (err?: unknown) => {
    listening = false;
    emitter.off('notification', onNotification);
    emitter.off('error', onClientError);
    client.release(err === undefined ? undefined : true);
  };
  try {
    await client.query(`LISTEN "${channel}"`);
    listening = true;
  } catch (err) {
    done(err); // a LISTEN refused (a server in recovery, a reset) must not keep its connection from the pool
    throw err;
  }
  let ending: Promise<void> | undefined;
  // Once only, however often it is called (on stop, and on a connection error meanwhile).
  return () =>
    (ending ??= (async () => {
      listening = false;
      try {
        await client.query(`UNLISTEN "${channel}"`);
        done();
      } catch (err) {
        done(err);
      }
    })());
}
