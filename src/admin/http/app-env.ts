import type { Registry } from 'prom-client';
import type { Actor } from '../../ports/admin-store.js';
import type { SessionCodec, Session } from '../auth/session-cookie.js';
import type { SessionRevocations } from '../auth/session-revocations.js';
import type { TokenSet } from '../auth/token-set.js';
import type { SharedRead } from '../shared-read.js';
import type { StoreDirectory } from '../store-directory.js';
import type { ParsedAppOptions } from './app-options.js';

/** What the auth middleware puts on the request context. */
export interface AppEnv {
  Variables: {
    actor: Actor;
    /** The session, when the request came with the cookie rather than a bearer token. */
    session: Session | undefined;
  };
}

/** Everything the routes share. */
export interface AppDeps {
  readonly options: ParsedAppOptions;
  /** The stores served; routes act on the one the request's `store` names. */
  readonly stores: StoreDirectory;
  readonly tokens: TokenSet;
  readonly sessions: SessionCodec;
  /** Sessions ended by sign-out, until they expire. */
  readonly revocations: SessionRevocations;
  /** The doctor's report, shared and reused for `cache.doctorMs`; undefined when no doctor is configured. */
  readonly doctor: SharedRead<unknown> | undefined;
  readonly registry: Registry;
  readonly cookieName: string;
}
