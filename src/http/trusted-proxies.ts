/**
 * Whose X-Forwarded-For and X-Forwarded-Proto count: only those of a peer listed in
 * GOALPOST_TRUST_PROXY (addresses or CIDRs, IPv4 and IPv6). Anyone else could write any client
 * address into the header and dodge or misattribute the per-client limits. Matching is node:net's
 * BlockList, which also matches IPv4-mapped IPv6 peers (::ffff:10.0.0.1) against IPv4 entries.
 */
import { BlockList, isIP } from 'node:net'

/**
 * One entry of the list, checked: `10.0.0.0/8`, `192.168.1.10`, `fd00::/8`, `::1`.
 * Throws with the reason when the entry is neither an address nor a CIDR.
 */
export function parseProxyEntry(entry: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } {
  const [address = '', prefixText, ...rest] = entry.trim().split('/')
  const version = isIP(address)
  if (version === 0 || rest.length > 0) throw new Error(`"${entry}" is not an IP address or CIDR`)
  const bits = version === 4 ? 32 : 128
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) throw new Error(`"${entry}" has a prefix length that is not a number`)
  const prefix = prefixText === undefined ? bits : Number(prefixText)
  if (prefix > bits) throw new Error(`"${entry}" has a prefix length above ${bits}`)
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' }
}

const MAPPED_V4 = /^(?:(?:0{1,4}:){5}|::)ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i

/**
 * An address as the rest of the service keys on it: an IPv4-mapped IPv6 address as the IPv4
 * address it is, without the port some proxies append (`1.2.3.4:5678`, `[2001:db8::1]:443`).
 */
export function plainAddress(raw: string): string {
  const address = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(raw)?.[1] ?? /^\[([^\]]+)\](?::\d+)?$/.exec(raw)?.[1] ?? raw
  const dotted = /^(?:(?:0{1,4}:){5}|::)ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (dotted) return dotted[1]
  const m = MAPPED_V4.exec(address)
  if (!m) return address
  const hi = parseInt(m[1], 16)
  const lo = parseInt(m[2], 16)
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

export class TrustedProxies {
  readonly #list = new BlockList()
  readonly #empty: boolean

  /** @example new TrustedProxies(['10.0.0.0/8', '::1']) */
  constructor(entries: readonly string[] = []) {
    this.#empty = entries.length === 0
    for (const entry of entries) {
      const { address, prefix, family } = parseProxyEntry(entry)
      this.#list.addSubnet(address, prefix, family)
    }
  }

  trusts(address: string): boolean {
    if (this.#empty) return false
    const version = isIP(address)
    return version !== 0 && this.#list.check(address, version === 4 ? 'ipv4' : 'ipv6')
  }

  /**
   * The client's address: walking X-Forwarded-For from the peer leftwards, the first hop that is
   * not a trusted proxy (each trusted proxy appends the address it received from). A peer that is
   * not trusted is the client, whatever the header says.
   */
  clientAddress(peer: string, forwardedFor: string | undefined): string {
    let client = plainAddress(peer)
    if (forwardedFor === undefined || !this.trusts(client)) return client
    const hops = forwardedFor.split(',').map((hop) => plainAddress(hop.trim()))
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]
      if (isIP(hop) === 0) break
      client = hop
      if (!this.trusts(hop)) break
    }
    return client
  }

  /** true when the request reached the first proxy over HTTPS, as a trusted peer says */
  forwardedHttps(peer: string, forwardedProto: string | undefined): boolean {
    if (forwardedProto === undefined || !this.trusts(plainAddress(peer))) return false
    return forwardedProto.split(',')[0].trim().toLowerCase() === 'https'
  }
}
