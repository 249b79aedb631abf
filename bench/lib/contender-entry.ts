/**
 * The child's side of a contender (see contender-process.ts): set up from the arguments the parent
 * passed, report ready, run on `go`, report done with the result, close on `close`.
 */
import { profileAllocations } from './alloc-profile.js';

export interface Session {
  run(args: unknown): Promise<unknown>;
  /** Told to finish: make a run that waits for more end now, with what it has. */
  finish?(): void;
  close(): Promise<void>;
}

export function serveContender<A>(setup: (args: A) => Promise<Session>): void {
  const send = (m: unknown) => process.send!(m);
  const fail = (err: unknown) => {
    send({ kind: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    process.exitCode = 1;
  };
  const args = JSON.parse(process.argv[2] ?? '{}') as A;
  setup(args).then((session) => {
    process.on('message', (m: { kind: 'go' | 'finish' | 'close'; args?: unknown }) => {
      if (m.kind === 'go')
        profileAllocations(() => session.run(m.args)).then((result) => send({ kind: 'done', result }), fail);
      else if (m.kind === 'finish') session.finish?.();
      else
        session
          .close()
          .catch(fail)
          .finally(() => process.exit()); // a lingering timer must not keep it alive
    });
    send({ kind: 'ready' });
  }, fail);
}
