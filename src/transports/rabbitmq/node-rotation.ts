/** Where the connect loop starts in the list of nodes: a random one (spreads processes), or the first. */
export type NodeOrder = 'random' | 'listed';

/** A connection the broker drops sooner than this counts as a failed attempt, not as a connection. */
const LASTING_MS = 1_000;

/**
 * Which cluster node to connect to next. Nodes are tried one after another, wrapping around,
 * starting at a random node or the first; a failed connect or a loss moves on to the next node.
 * Only a whole round of nodes without a lasting connection earns a backoff, so losing one node
 * fails over at once, while a cluster that refuses (or drops) every connection is not hammered.
 * @example
 * const nodes = new NodeRotation(['amqp://a', 'amqp://b'], 'listed');
 * nodes.next(); // { url: 'amqp://a', backoffAttempt: 0 }
 * nodes.next(); // { url: 'amqp://b', backoffAttempt: 0 }  (a failed)
 * nodes.next(); // { url: 'amqp://a', backoffAttempt: 1 }  (a round failed: wait first)
 */
export class NodeRotation {
  private position: number;
  /** Nodes tried in the current round. */
  private tried = 0;
  /** Rounds in a row that ended without a lasting connection. */
  private failedRounds = 0;

  constructor(
    private readonly urls: readonly string[],
    order: NodeOrder,
    random: () => number = Math.random,
  ) {
    this.position = order === 'random' ? Math.floor(random() * urls.length) % urls.length : 0;
  }

  /**
   * The node to try now, and `backoffAttempt`: 0 to try at once, else the number of rounds in a
   * row that failed (wait `reconnect.delayMs(backoffAttempt)` first).
   */
  next(): { url: string; backoffAttempt: number } {
    let backoffAttempt = 0;
    if (this.tried >= this.urls.length) {
      this.tried = 0;
      backoffAttempt = ++this.failedRounds;
    }
    this.tried++;
    const url = this.urls[this.position]!;
    this.position = (this.position + 1) % this.urls.length;
    return { url, backoffAttempt };
  }

  /**
   * The connection to the node last returned was lost after `lastedMs`. A lasting one starts a new
   * round in which that node counts as tried: the other nodes come next, at once. One dropped at
   * once stays a failed attempt of the round it was made in.
   */
  lost(lastedMs: number): void {
    if (lastedMs < LASTING_MS) return;
    this.tried = 1;
    this.failedRounds = 0;
  }
}
