/** The headers a browser sends that say where a request comes from. */
export interface OriginHeaders {
  readonly origin: string | undefined;
  readonly secFetchSite: string | undefined;
  /** The Host header the request was sent to. */
  readonly host: string | undefined;
}

/**
 * Why a cookie-authenticated change must be refused as possibly cross-site, or undefined when it
 * comes from the console's own origin. A browser sends `Origin` with every POST/DELETE and
 * `Sec-Fetch-Site` with every fetch; a request with neither is refused, since a cookie means a browser.
 * The host is compared without the scheme, so a TLS-terminating proxy does not break the console;
 * `allowedOrigins` adds origins served under another host name.
 */
export function crossSiteReason(h: OriginHeaders, allowedOrigins: readonly string[]): string | undefined {
  if (h.secFetchSite !== undefined && h.secFetchSite !== 'same-origin') {
    return `cross-site request refused (Sec-Fetch-Site: ${h.secFetchSite.slice(0, 20)})`;
  }
  if (h.origin === undefined) {
    return h.secFetchSite === undefined ? 'a change made with the session cookie needs an Origin header' : undefined;
  }
  if (allowedOrigins.includes(h.origin)) return undefined;
  let originHost: string;
  try {
    originHost = new URL(h.origin).host;
  } catch {
    return 'cross-site request refused (unreadable Origin)';
  }
  if (h.origin === 'null' || h.host === undefined || originHost.toLowerCase() !== h.host.toLowerCase()) {
    return 'cross-site request refused (foreign Origin)';
  }
  return undefined;
}
