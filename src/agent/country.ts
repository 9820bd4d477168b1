/**
 * The visitor's country from the client address, looked up at ingest in a country database that
 * ships inside an npm package: nothing is fetched at run time, and the address is never stored.
 *
 * The database is ip-location-db's geo-whois-asn-country (published geofeeds, then the five RIRs'
 * WHOIS, then their ASN assignments; data under CC BY 4.0 by the NRO), read by MaxMind's `maxmind`
 * reader. That file names a country for some private and documentation ranges (192.168.0.0/16 and
 * 172.16.0.0/12 as AU, 2001:db8::/32 as JP), so addresses that are not globally routable are
 * answered null here before the database is asked.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { isIP } from 'node:net'
import { LRUCache } from 'lru-cache'
import { Reader, type Response } from 'maxmind'

/** the ISO 3166-1 alpha-2 code of an address, or null when unknown */
export type CountryOf = (address: string) => string | null

/** the IPv4-and-IPv6 database of @ip-location-db/geo-whois-asn-country-mmdb */
const require = createRequire(import.meta.url)
const PACKAGED_DATABASE = require.resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb')

/** what ip-location-db's databases hold for a range (not one of MaxMind's own record shapes) */
interface CountryRecord {
  country_code?: unknown
  /** MaxMind's own country databases (GeoLite2-Country, GeoIP2-Country) */
  country?: { iso_code?: unknown }
}

/**
 * Ranges that are not globally routable (the IANA special-purpose registries): nobody on the
 * internet sends from them, so a client there is one of ours or a proxy's, and has no country.
 */
const SPECIAL_IPV4 = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24',
  '192.0.2.0/24', '192.88.99.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/3',
]
/** inside 2000::/3, the only global unicast block of IPv6; every prefix here is at most 32 bits */
const SPECIAL_IPV6 = ['2001::/23', '2001:db8::/32', '2002::/16', '3fff::/20']

/** [first bits, mask] of a range over the first 32 bits of an address */
type Range = readonly [number, number]

// node:net's BlockList says the same but costs about 2 µs a check (measured), more than the
// database lookup itself: the first 32 bits of an address, compared as numbers, cost nothing
const ipv4Ranges: Range[] = SPECIAL_IPV4.map((r) => range(ipv4Bits(r.split('/')[0]), r))
const ipv6Ranges: Range[] = SPECIAL_IPV6.map((r) => range(ipv6Bits(r.split('/')[0]), r))

function range(bits: number, cidr: string): Range {
  const prefix = Number(cidr.split('/')[1])
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0
  return [(bits & mask) >>> 0, mask]
}

/** a valid dotted IPv4 address as a 32-bit number */
function ipv4Bits(address: string): number {
  const [a, b, c, d] = address.split('.')
  return ((+a << 24) | (+b << 16) | (+c << 8) | +d) >>> 0
}

/** the first 32 bits of a valid IPv6 address (`::` in the first two groups stands for zeros) */
function ipv6Bits(address: string): number {
  const colon = address.indexOf(':')
  const first = colon === 0 ? 0 : parseInt(address.slice(0, colon), 16)
  const next = address.indexOf(':', colon + 1)
  const second = next === colon + 1 || colon === 0 ? 0 : parseInt(address.slice(colon + 1, next < 0 ? undefined : next), 16)
  return ((first << 16) | second) >>> 0
}

const within = (bits: number, ranges: Range[]): boolean => ranges.some(([base, mask]) => ((bits & mask) >>> 0) === base)

/** whether a valid address of IP `version` may be a client on the internet */
function routable(address: string, version: number): boolean {
  if (version === 4) return !within(ipv4Bits(address), ipv4Ranges)
  const bits = ipv6Bits(address)
  return bits >>> 29 === 1 && !within(bits, ipv6Ranges)
}

const MAPPED_DOTTED = /^(?:(?:0{1,4}:){5}|::)ffff:(\d+\.\d+\.\d+\.\d+)$/i
const MAPPED_HEX = /^(?:(?:0{1,4}:){5}|::)ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i

/** an IPv4-mapped IPv6 address (::ffff:8.8.8.8, ::ffff:808:808) as the IPv4 address it is */
function unmapped(address: string): string {
  const dotted = MAPPED_DOTTED.exec(address)
  if (dotted) return dotted[1]
  const hex = MAPPED_HEX.exec(address)
  if (!hex) return address
  const hi = parseInt(hex[1], 16)
  const lo = parseInt(hex[2], 16)
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

function lookUp(reader: Reader<Response>, raw: string): string | null {
  const address = unmapped(raw)
  const version = isIP(address)
  if (version === 0 || !routable(address, version)) return null
  let code: unknown
  try {
    const record = reader.get(address) as CountryRecord | null
    code = record?.country_code ?? record?.country?.iso_code
  } catch {
    // the reader refuses what isIP lets through in an address (an IPv6 zone: fe80::1%eth0)
    return null
  }
  return typeof code === 'string' && /^[A-Z]{2}$/.test(code) ? code : null
}

/**
 * Opens the packaged country database (or `file`, another MaxMind DB: ip-location-db's
 * `country_code` records or MaxMind's `country.iso_code` ones) and answers the country of an address: the ISO 3166-1
 * alpha-2 code, or null for an address that is not globally routable, not an address at all, or
 * not in the database. Reads the file once, synchronously
 * (about 8 MB, held in memory); throws when it cannot be read or is no MaxMind DB.
 *
 * An uncached lookup costs 3–5 µs for IPv4 and 6–8 µs for IPv6 (measured: the tree walk, then
 * remembering the answer); every event of a visit comes from the same address, so the most recent
 * answers are remembered and a repeat costs about 0.1 µs.
 *
 * @example const countryOf = openCountryLookup(); countryOf('8.8.8.8') // 'US'
 */
export function openCountryLookup(file = PACKAGED_DATABASE): CountryOf {
  // decoded records by their place in the file: about one per country in a country database, so a plain Map
  const reader = new Reader<Response>(readFileSync(file), { cache: new Map<string | number, unknown>() })
  const cache = new LRUCache<string, string>({ max: 8192 })
  return (address) => {
    let answer = cache.get(address)
    if (answer === undefined) cache.set(address, (answer = lookUp(reader, address) ?? ''))
    return answer === '' ? null : answer
  }
}
