/** Revoked sessions kept at most; past it, the ones expiring soonest are forgotten first. */
const MAX_REVOKED = 100_000;

/**
 * Sessions ended by sign-out, remembered until they would have expired anyway, so a copied cookie
 * stops working at once. In memory, per process: behind several instances a revoked cookie keeps
 * working on the others until it expires.
 * @example
 * revocations.revoke(session.id, session.expiresAt, now);
 * if (revocations.isRevoked(session.id, now)) throw new UnauthenticatedError();
 */
export class SessionRevocations {
  /** Session id -> expiry, in insertion order (sessions share one lifetime, so roughly by expiry). */
  private readonly revoked = new Map<string, number>();

  revoke(id: string, expiresAt: number, now: number): void {
    if (expiresAt <= now) return;
    this.revoked.set(id, expiresAt);
    if (this.revoked.size > MAX_REVOKED) this.prune(now);
  }

  isRevoked(id: string, now: number): boolean {
    const expiresAt = this.revoked.get(id);
    if (expiresAt === undefined) return false;
    if (expiresAt > now) return true;
    this.revoked.delete(id);
    return false;
  }

  get size(): number {
    return this.revoked.size;
  }

  private prune(now: number): void {
    for (const [id, expiresAt] of this.revoked) if (expiresAt <= now) this.revoked.delete(id);
    // Down to nine tenths, so a flood of sign-outs does not scan the map on every one.
    for (const id of this.revoked.keys()) {
      if (this.revoked.size <= MAX_REVOKED * 0.9) break;
      this.revoked.delete(id);
    }
  }
}
