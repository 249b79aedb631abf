import { run, talk, target, which } from './tools.mjs';

/** RabbitMQ: an AMQP handshake and `rabbitmq-diagnostics check_running`, started with rabbitmq-server -detached. */
export function rabbitmq() {
  const t = target('SURETY_TEST_AMQP_URL', 'amqp://guest:guest@127.0.0.1:5672');
  const server = which('rabbitmq-server');
  const diagnostics = which('rabbitmq-diagnostics');
  return {
    name: 'rabbitmq',
    target: t,
    deadlineMs: 90_000,
    async probe() {
      // An AMQP 0-9-1 protocol header is answered with a Connection.Start method frame (type 1).
      const reply = await talk(t.host, t.port, Buffer.from('AMQP\x00\x00\x09\x01', 'latin1'));
      if (!reply || reply[0] !== 1) return 'down';
      if (!t.managed || !diagnostics) return 'up';
      // The listener opens late in boot; the node's own check confirms it finished booting.
      return (await run(diagnostics, ['-q', 'check_running'], { timeoutMs: 20_000 })).ok ? 'up' : 'starting';
    },
    installHint: 'apt-get install -y rabbitmq-server',
    logHint: '/var/log/rabbitmq/',
    start: server ? { file: server, args: ['-detached'] } : undefined,
  };
}
