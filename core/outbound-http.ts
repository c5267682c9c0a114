// One HTTP(S) POST to a URL a tenant configured (webhooks). A tenant must not reach
// this machine or its network through it (SSRF), so unless allowPrivate only public
// unicast addresses are connected to. The check runs in the socket's own lookup: it
// judges the very addresses the connection is made to, so a name that answers with a
// public address to a first lookup and 127.0.0.1 to the next (DNS rebinding) gains nothing.
import { promises as dns, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export type OutboundErrorCode = 'REFUSED_TARGET' | 'TIMEOUT' | 'NETWORK' | 'INVALID_URL';

export class OutboundError extends Error {
  readonly code: OutboundErrorCode;
  constructor(code: OutboundErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OutboundError';
    this.code = code;
  }
}

// NAT64 (64:ff9b::/96) carries an IPv4 address in its last 32 bits: that one is judged
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
// IPv6 global unicast is 2000::/3; ipaddr.js calls ::7f00:1 (IPv4-compatible, outside it) 'unicast' too
const GLOBAL_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** Why an address may not be connected to, or null for a public unicast address (also the policy of core/db/external-db.ts). */
export function refusedAddress(address: string): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  let ip = ipaddr.process(address); // ::ffff:127.0.0.1 becomes 127.0.0.1
  if (ip instanceof ipaddr.IPv6 && ip.match(NAT64)) ip = ipaddr.fromByteArray(ip.toByteArray().slice(12));
  // an allow-list: loopback, private, link-local (cloud metadata), CGNAT, multicast, reserved... are all not 'unicast'
  const range = ip.range();
  if (range !== 'unicast') return `${address} is a ${range} address`;
  if (ip instanceof ipaddr.IPv6 && !ip.match(GLOBAL_V6)) return `${address} is not a global unicast address`;
  return null;
}

type Inspected = { url: URL } | { code: 'INVALID_URL' | 'REFUSED_TARGET'; reason: string };

function inspect(raw: string, allowPrivate: boolean): Inspected {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { code: 'INVALID_URL', reason: 'not a valid absolute URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { code: 'INVALID_URL', reason: `${url.protocol} URLs are not allowed, only http: and https:` };
  if (url.username || url.password) return { code: 'INVALID_URL', reason: 'credentials in the URL are not allowed' };
  if (allowPrivate) return { url };
  // the WHATWG parser has already turned 2130706433, 0x7f.1 and 0177.0.0.1 into 127.0.0.1
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // Node connects to a literal address without any lookup, so literals are judged here
  const refused = isIP(host) ? refusedAddress(host) : /(^|\.)localhost\.?$/.test(host) ? `${host} is this machine` : null;
  return refused ? { code: 'REFUSED_TARGET', reason: refused } : { url };
}

/** Why a subscription URL is unacceptable as such (before any DNS lookup), or null. */
export function checkTargetUrl(url: string, allowPrivate: boolean): string | null {
  const inspected = inspect(url, allowPrivate);
  return 'reason' in inspected ? inspected.reason : null;
}

/** Resolves a host name to all its addresses (the system resolver, or a test's). */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (host) => dns.lookup(host, { all: true });

/**
 * A socket's lookup that resolves, then refuses the host if any of its addresses
 * `refused` judges refused (one refused address refuses them all: a rebinding
 * name may answer with a public and a private one). `fail` makes the error of a
 * name without an address and of a refused one. Webhooks use it, and the
 * external databases of core/db/external-db.ts.
 */
export function guardedLookup(resolve: Resolve, refused: (hostname: string, address: string) => string | null, fail: (kind: 'no-address' | 'refused', message: string) => Error): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    resolve(hostname)
      .then((found) => {
        const addresses = family ? found.filter((a) => a.family === family) : found;
        if (addresses.length === 0) throw fail('no-address', `${hostname} has no address`);
        const why = addresses.map((a) => refused(hostname, a.address)).find((w) => w !== null);
        if (why) throw fail('refused', `${hostname} resolves to a refused address: ${why}`);
        return addresses;
      })
      .then(
        (addresses) => (options.all ? callback(null, addresses) : callback(null, addresses[0].address, addresses[0].family)),
        (err: Error) => callback(err, '', 0),
      );
  };
}

export interface PostJsonOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  maxResponseBytes: number;
  /** resolves a host name to all its addresses (default: the system resolver); tests inject one */
  lookup?: Resolve;
}

export interface PostJsonResult {
  status: number;
  durationMs: number;
  body: string;
  truncated: boolean;
}

/** POSTs body once; a 3xx is returned, not followed. Throws OutboundError on a refused target, a timeout or a network failure. */
export async function postJson(url: string, body: string, headers: Record<string, string>, opts: PostJsonOptions): Promise<PostJsonResult> {
  const target = inspect(url, opts.allowPrivate);
  if ('reason' in target) throw new OutboundError(target.code, target.reason);
  const lookup = guardedLookup(
    opts.lookup ?? systemResolve,
    (_host, address) => (opts.allowPrivate ? null : refusedAddress(address)),
    (kind, message) => new OutboundError(kind === 'refused' ? 'REFUSED_TARGET' : 'NETWORK', message),
  );
  const signal = AbortSignal.timeout(opts.timeoutMs); // covers lookup, connect, TLS, upload and the whole answer
  const started = performance.now();
  const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      if (signal.aborted) reject(new OutboundError('TIMEOUT', `no complete answer within ${opts.timeoutMs} ms`, { cause: err }));
      else reject(err instanceof OutboundError ? err : new OutboundError('NETWORK', err.message, { cause: err }));
    };
    const allHeaders = { 'content-type': 'application/json', 'user-agent': 'Plinth-Webhooks/1', ...headers, 'content-length': String(Buffer.byteLength(body)) };
    // agent: false, a fresh socket each time: a pooled one could have been opened by a call that allowed private targets
    const req = send(target.url, { method: 'POST', headers: allHeaders, agent: false, lookup, signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (truncated: boolean) => {
        if (settled) return;
        settled = true;
        resolve({ status: res.statusCode ?? 0, durationMs: Math.round(performance.now() - started), body: Buffer.concat(chunks).toString('utf8'), truncated });
      };
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        if (size + chunk.length <= opts.maxResponseBytes) {
          chunks.push(chunk);
          size += chunk.length;
          return;
        }
        chunks.push(chunk.subarray(0, opts.maxResponseBytes - size));
        finish(true);
        req.destroy(); // closes the socket: the rest of a large answer is never downloaded
      });
      res.on('end', () => finish(false));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(body);
  });
}
