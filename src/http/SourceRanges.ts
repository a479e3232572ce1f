// Source-address filtering for the LAN listener: CIDR ranges over IPv4 and IPv6, with
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d, what a dual-stack socket reports) read as IPv4.
import { BlockList, isIPv4, isIPv6 } from "node:net"

export const defaultLanSourceRanges = [
  "127.0.0.0/8",
  "::1/128",
  "10.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "fc00::/7",
  "fe80::/10"
] as const

export interface SourceRanges {
  readonly allows: (address: string | undefined) => boolean
  readonly ranges: ReadonlyArray<string>
}

export const normaliseAddress = (address: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return mapped === null ? address : mapped[1]
}

/** Parses "a.b.c.d/n" and "x::y/n" (a bare address means a single host); throws naming a bad entry. */
export const parseSourceRanges = (ranges: ReadonlyArray<string>): SourceRanges => {
  const list = new BlockList()
  for (const raw of ranges) {
    const range = raw.trim()
    if (range === "") continue
    const parts = range.split("/")
    const [address, prefixText] = parts
    const family = isIPv4(address) ? "ipv4" : isIPv6(address) ? "ipv6" : undefined
    const maxPrefix = family === "ipv4" ? 32 : 128
    // a prefix is 1 to 3 decimal digits: "10.0.0.0/" must not become /0 and admit everyone
    const prefix = prefixText === undefined ? maxPrefix : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN
    if (family === undefined || parts.length > 2 || !Number.isInteger(prefix) || prefix < 0 || prefix > maxPrefix) {
      throw new Error(`invalid source range "${range}": expected CIDR like 192.168.0.0/16 or fd00::/8`)
    }
    list.addSubnet(address, prefix, family)
  }
  return {
    ranges,
    allows: (address) => {
      if (address === undefined) return false
      const normalised = normaliseAddress(address)
      return list.check(normalised, isIPv4(normalised) ? "ipv4" : "ipv6")
    }
  }
}
