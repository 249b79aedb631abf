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
