// DNS rebinding (docs/operations.md, Network). A web page of evil.example whose name is then re-pointed at
// 127.0.0.1 is, to the browser, still of evil.example: it may call a service on loopback as its
// own, read the answers, and see the sign-in page. Its requests carry `Host: evil.example`. So a
// server that listens on loopback only answers the names this machine goes by and refuses the
// rest with 421, as Syncthing and Jupyter do; listening on other addresses it is meant to be
// reached under names it cannot know, and does not check.
import { hostname } from 'node:os'
import { AppError } from './errors.ts'

export type HostOptions = {
  /** The address serve listens on (--host); undefined: not known (in-process tests), no check. */
  listen?: string
  /** serve --public-url: its host is one of ours. */
  publicUrl?: string
  /** serve --allow-host: more names (or addresses). */
  allowHosts?: readonly string[]
  /** This machine's host name (default os.hostname()). */
  machine?: string
}

/**
 * A host name or address as the check compares it, the way the URL of a request spells it: lower
 * case (and punycode), an address in its shortest form, without IPv6 brackets and without a final
 * dot. Undefined: not a host alone (a port, a path, a wildcard or a user in it).
 */
export function hostOf(value: string): string | undefined {
  if (/[/\\?#@*%\s]/.test(value)) return undefined
  const bare = value.endsWith('.') ? value.slice(0, -1) : value
  const bracketed = bare.includes(':') && !bare.startsWith('[') ? `[${bare}]` : bare
  const url = URL.canParse(`http://${bracketed}/`) ? new URL(`http://${bracketed}/`) : undefined
  if (!url || url.port || url.pathname !== '/' || !url.hostname) return undefined
  const host = nameOf(url.hostname)
  return /^[a-z0-9._-]+$/.test(host) || host.includes(':') ? host : undefined
}

/** The host of a URL's host and port: without the port, the IPv6 brackets and a final dot. */
function nameOf(hostAndPort: string): string {
  let host = hostAndPort
  if (host.startsWith('[')) host = host.slice(1, host.indexOf(']'))
  else if (host.includes(':')) host = host.slice(0, host.lastIndexOf(':'))
  return host.endsWith('.') ? host.slice(0, -1) : host
}

const IPV4 = /^\d+\.\d+\.\d+\.\d+$/

/**
 * Whether an address to listen on (serve --host) is this machine's loopback only: 127.0.0.0/8,
 * ::1 (also as ::ffff:127.x.y.z) or localhost. Only then is the Host checked.
 */
export function listensOnLoopback(address: string): boolean {
  const host = hostOf(address)
  if (host === undefined) return false
  if (host === 'localhost' || host === '::1') return true
  if (IPV4.test(host)) return host.startsWith('127.')
  // An IPv4 address mapped into IPv6, as the URL parser writes it: ::ffff:7f00:1 is 127.0.0.1.
  return /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host)
}

/** What comes between "http://" and the path of a request's URL. */
const hostAndPortOf = (url: string) => {
  const end = url.indexOf('/', 7)
  return end < 0 ? url.slice(7) : url.slice(7, end)
}

/** Decisions kept, by the host and port of a request's URL; then forgotten all at once. */
const MAX_DECIDED = 1000

/**
 * The check, or undefined when the server does not listen on loopback only. admits(request) is
 * cheap for the names a server sees again and again: one slice of the URL and one lookup.
 */
export function createHostCheck({ listen, publicUrl, allowHosts = [], machine = hostname() }: HostOptions) {
  if (listen === undefined || !listensOnLoopback(listen)) return undefined
  const ours = new Set(['localhost'])
  for (const name of [machine, publicUrl && new URL(publicUrl).hostname, ...allowHosts]) {
    const host = name ? hostOf(name) : undefined
    if (host) ours.add(host)
  }
  const decided = new Map<string, boolean>()

  /**
   * The Host of a request's URL (Bun builds it from the header: lower case, the default port
   * dropped, an address in its shortest form; in-process the Request constructor does the same).
   */
  function allows(hostAndPort: string): boolean {
    const host = nameOf(hostAndPort)
    if (ours.has(host)) return true
    // An address, of loopback or not (as Syncthing): a page of an address is of whatever answers
    // there, and no DNS answer can point it elsewhere. A client or a proxy may well send one.
    if (host.includes(':') || IPV4.test(host)) return true
    // A single label (nas, x): public DNS gives no such names, so no page of the web is of one.
    if (!host.includes('.')) return true
    // mDNS names, which only the local network answers.
    return host.endsWith('.local')
  }

  /** Whether the app answers the request's Host; a URL without one is checkHead's 400, not ours. */
  function admits(request: Request): boolean {
    const url = request.url
    if (!url.startsWith('http://')) return true
    const hostAndPort = hostAndPortOf(url)
    let allowed = decided.get(hostAndPort)
    if (allowed === undefined) {
      allowed = allows(hostAndPort)
      // Names are the sender's to choose: forget them all now and then, rather than keep each.
      if (decided.size >= MAX_DECIDED) decided.clear()
      decided.set(hostAndPort, allowed)
    }
    return allowed
  }

  return {
    admits,
    /** Throws the 421 misdirected_request of a request whose Host this server does not answer. */
    check(request: Request) {
      if (admits(request)) return
      const host = nameOf(hostAndPortOf(request.url))
      throw new AppError(
        421,
        'misdirected_request',
        `This server listens on loopback only and answers to the names of this machine, not to "${host}"; serve --allow-host adds a name.`,
      )
    },
  }
}

export type HostCheck = NonNullable<ReturnType<typeof createHostCheck>>
