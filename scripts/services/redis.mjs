import { talk, target, which } from './tools.mjs';

/** Redis: answers PING with +PONG; started as the machine's image starts it (no persistence, loopback only). */
export function redis() {
  const t = target('SURETY_TEST_REDIS_URL', 'redis://127.0.0.1:6379');
  const server = which('redis-server');
  return {
    name: 'redis',
    target: t,
    deadlineMs: 30_000,
    async probe() {
      const reply = await talk(t.host, t.port, Buffer.from('PING\r\n'), (r) => r.includes('\r\n'));
      if (!reply) return 'down';
      const text = reply.toString('latin1');
      // -LOADING: the server answers but is still reading its data.
      return text.startsWith('+PONG') || text.startsWith('-NOAUTH')
        ? 'up'
        : text.startsWith('-LOADING')
          ? 'starting'
          : 'down';
    },
    installHint: 'apt-get install -y redis-server',
    logHint: '/var/log/redis/ci.log',
    start: server
      ? {
          file: server,
          args: [
            '--daemonize',
            'yes',
            '--bind',
            '127.0.0.1',
            '-::1',
            '--port',
            String(t.port),
            '--save',
            '',
            '--appendonly',
            'no',
            '--dir',
            '/var/lib/redis',
            '--logfile',
            '/var/log/redis/ci.log',
          ],
        }
      : undefined,
  };
}
