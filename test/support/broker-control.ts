import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Stops the RabbitMQ application for real (connections drop, the port refuses), keeping the node up. */
export async function stopRabbit(): Promise<void> {
  await run('rabbitmqctl', ['stop_app'], { timeout: 60_000 });
}

export async function startRabbit(): Promise<void> {
  await run('rabbitmqctl', ['start_app'], { timeout: 120_000 });
  await run('rabbitmqctl', ['await_startup'], { timeout: 120_000 });
}

/**
 * Closes, from the broker's side, every connection whose client named itself `name` (amqplib's
 * `connection_name`, the transport's `connectionName`): the client sees a forced close, as on a
 * network fault or a node's failover. Resolves with how many were cut.
 */
export async function cutRabbitConnections(name: string): Promise<number> {
  const { stdout } = await run(
    'rabbitmqctl',
    ['list_connections', 'pid', 'client_properties', '-q', '--no-table-headers'],
    {
      timeout: 60_000,
    },
  );
  const needle = `{"connection_name","${name}"}`;
  const pids = stdout
    .split('\n')
    .filter((line) => line.includes(needle))
    .map((line) => line.split('\t')[0]!);
  for (const pid of pids) await run('rabbitmqctl', ['close_connection', pid, 'cut by a test'], { timeout: 60_000 });
  return pids.length;
}
