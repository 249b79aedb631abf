import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FetchedState } from '../../src/consumer/fetch-back.js';
import type { WireMessage } from '../../src/core/wire.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import type { ChildMessage, ParentMessage } from './fetch-back-protocol.js';

type Kind = ChildMessage['kind'];
type Of<K extends Kind> = Extract<ChildMessage, { kind: K }>;

/**
 * The test's side of a fetch-back consumer process (test/support/fetch-back-process.ts): reads
 * what it reports in order, and answers its fetches.
 */
export class FetchBackChild {
  private readonly queue: ChildMessage[] = [];
  private wake: (() => void) | undefined;
  private exited = false;
  private stderr = '';

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (m: ChildMessage) => {
      this.queue.push(m);
      this.wake?.();
    });
    child.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString()));
    child.once('exit', () => {
      this.exited = true;
      this.wake?.();
    });
  }

  static async start(env: {
    dialect: ConsumerStore['dialect'];
    storeAt: string;
    group: string;
    currentVersion: boolean;
  }): Promise<FetchBackChild> {
    const file = fileURLToPath(new URL('./fetch-back-process.ts', import.meta.url));
    const child = fork(file, [], {
      execArgv: ['--import', 'tsx'],
      env: {
        ...process.env,
        SURETY_DIALECT: env.dialect,
        SURETY_STORE_AT: env.storeAt,
        SURETY_GROUP: env.group,
        SURETY_CURRENT_VERSION: env.currentVersion ? '1' : '0',
      },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const handle = new FetchBackChild(child);
    await handle.next('ready');
    return handle;
  }

  /** The next report, which must be of `kind`. */
  async next<K extends Kind>(kind: K): Promise<Of<K>> {
    const m = await this.take();
    if (m.kind !== kind) throw new Error(`expected "${kind}" from the consumer process, got ${JSON.stringify(m)}`);
    return m as Of<K>;
  }

  /** Every report up to and including `done`. */
  async untilDone(): Promise<{ reports: ChildMessage[]; done: Of<'done'> }> {
    const reports: ChildMessage[] = [];
    for (;;) {
      const m = await this.take();
      if (m.kind === 'done') return { reports, done: m };
      reports.push(m);
    }
  }

  handle(message: WireMessage, { hold = false } = {}): void {
    this.send({
      kind: 'handle',
      message: { id: message.id, headers: { ...message.headers }, body: message.body.toString('base64') },
      hold,
    });
  }

  /** Waits for the next fetch and answers it with `value`. */
  async answerFetch(value: FetchedState<{ name: string }>): Promise<void> {
    const { id } = await this.next('fetch');
    this.send({ kind: 'answer', id, value });
  }

  release(): void {
    this.send({ kind: 'release' });
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise((resolve) => this.child.once('exit', resolve));
    this.send({ kind: 'stop' });
    await gone;
  }

  /** Ends the process whatever it is doing (after a failed test). */
  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }

  private send(message: ParentMessage): void {
    this.child.send(message);
  }

  private async take(): Promise<ChildMessage> {
    for (;;) {
      const m = this.queue.shift();
      if (m?.kind === 'error') throw new Error(`the consumer process failed: ${m.message}`);
      if (m) return m;
      if (this.exited) throw new Error(`the consumer process exited: ${this.stderr}`);
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
