import { existsSync } from 'node:fs';
import { talk, target, which } from './tools.mjs';

/** NATS with JetStream: greets with INFO, whose JSON says whether JetStream is on; started with start-stop-daemon. */
export function nats() {
  const t = target('SURETY_TEST_NATS_URL', 'nats://127.0.0.1:4222');
  const daemon = '/usr/sbin/nats-server';
  const ssd = which('start-stop-daemon');
  return {
    name: 'nats',
    target: t,
    deadlineMs: 30_000,
    async probe() {
      const reply = await talk(t.host, t.port, undefined, (r) => r.includes('\r\n'));
      const line = reply?.toString('utf8').split('\r\n')[0] ?? '';
      if (!line.startsWith('INFO ')) return 'down';
      try {
        return JSON.parse(line.slice(5)).jetstream === true ? 'up' : 'no-jetstream';
      } catch {
        return 'down';
      }
    },
    explain: () => 'it answers, but without JetStream: restart nats-server with -js (and -sd <storage dir>)',
    installHint: 'apt-get install -y nats-server',
    logHint: '/var/log/nats-server.log',
    start:
      existsSync(daemon) && ssd
        ? {
            file: ssd,
            args: [
              '--start',
              '--oknodo',
              '--background',
              '--exec',
              daemon,
              '--',
              '-a',
              '127.0.0.1',
              '-p',
              String(t.port),
              '-js',
              '-sd',
              '/var/lib/nats-server',
              '-l',
              '/var/log/nats-server.log',
            ],
          }
        : undefined,
  };
}
