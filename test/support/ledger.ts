import type { Topology } from '../../src/transports/rabbitmq/index.js';

/** The payload of the order tests' `ledger.entry` messages: the n-th entry (`seq`, from 0) of an account. */
export interface LedgerEntry {
  readonly account: string;
  readonly seq: number;
}

/** A quorum queue with one active consumer at a time, bound to `ledger.#`. */
export function orderedQueueTopology(exchange: string, queue: string): Topology {
  return {
    queues: [{ name: queue, type: 'quorum', singleActiveConsumer: true }],
    bindings: [{ exchange, queue, pattern: 'ledger.#' }],
  };
}

/**
 * `count` entries over `accounts` accounts, round robin: what an ordered relay publishes, one head
 * per account at a time. Returns them in that order, with how many each account has.
 */
export function ledgerEntries(
  count: number,
  accounts: number,
): { entries: LedgerEntry[]; perAccount: Map<string, number> } {
  const perAccount = new Map<string, number>();
  const entries: LedgerEntry[] = [];
  for (let i = 0; i < count; i++) {
    const account = `acct-${i % accounts}`;
    const seq = perAccount.get(account) ?? 0;
    perAccount.set(account, seq + 1);
    entries.push({ account, seq });
  }
  return { entries, perAccount };
}
