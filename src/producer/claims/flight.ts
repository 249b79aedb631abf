import { Signal } from '../signal.js';

/**
 * The relay's flow control: rows published and not yet settled, plus rows reserved by claims still
 * running, count against `maxInFlight`. `freed` fires when room comes back for a loop waiting for it.
 */
export class Flight {
  readonly freed = new Signal();
  private inFlight = 0;
  private reserved = 0;

  constructor(private readonly max: number) {}

  get rows(): number {
    return this.inFlight;
  }

  /** Rows a new claim may take. */
  room(): number {
    return this.max - this.inFlight - this.reserved;
  }

  reserve(n: number): void {
    this.reserved += n;
  }

  /** A claim's reservation ends (its rows, if any, are counted by `took` instead). */
  unreserve(n: number): void {
    this.reserved -= n;
    this.freed.fire();
  }

  took(n: number): void {
    this.inFlight += n;
  }

  /** A row left flight. Only a loop waiting for room needs to hear of it: it is woken per row only then. */
  done(): void {
    const wasFull = this.room() <= 0;
    this.inFlight--;
    if (wasFull) this.freed.fire();
  }
}
