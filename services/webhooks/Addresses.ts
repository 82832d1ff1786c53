/**
 * Where a webhook may point. Every address class a request from inside the
 * service must never reach (loopback, private, link-local, CGNAT, multicast,
 * unspecified, reserved, IPv6 unique-local and the IPv6 forms that embed an
 * IPv4 address of those) is refused; `allowPrivate` (WEBHOOK_ALLOW_PRIVATE)
 * lets loopback and private receivers through for development and tests.
 */
import { BlockList, isIP } from "node:net"

const blocked = new BlockList()
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4] // reserved, broadcast
] as const) blocked.addSubnet(net, prefix, "ipv4")
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
  ["100::", 64], // discard
  ["2001:db8::", 32] // documentation
] as const) blocked.addSubnet(net, prefix, "ipv6")

/** What private mode still refuses: addresses no receiver listens on. */
const neverReachable = new BlockList()
neverReachable.addSubnet("0.0.0.0", 8, "ipv4")
neverReachable.addSubnet("224.0.0.0", 4, "ipv4")
neverReachable.addSubnet("240.0.0.0", 4, "ipv4")
neverReachable.addAddress("::", "ipv6")
neverReachable.addSubnet("ff00::", 8, "ipv6")

/** The IPv4 address an IPv6 one carries (IPv4-mapped, IPv4-compatible, NAT64, 6to4), if any. */
export const embeddedIpv4 = (address: string): string | undefined => {
  const lower = address.toLowerCase()
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower)
  if (dotted) return dotted[1]
  const groups = expandIpv6(lower)
  if (groups === undefined) return undefined
  const asV4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0)
  if (zeros(0, 5) && groups[5] === 0xffff) return asV4(groups[6]!, groups[7]!) // ::ffff:a.b.c.d
  if (zeros(0, 6) && (groups[6] !== 0 || groups[7]! > 1)) return asV4(groups[6]!, groups[7]!) // ::a.b.c.d
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return asV4(groups[6]!, groups[7]!) // NAT64
  if (groups[0] === 0x2002) return asV4(groups[1]!, groups[2]!) // 6to4
  return undefined
}

/** Eight 16-bit groups of an IPv6 address (with any dotted IPv4 tail), or undefined. */
const expandIpv6 = (address: string): Array<number> | undefined => {
  let text = address.split("%")[0]!
  const tail = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text)
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, rest] = text.split("::") as [string, string | undefined]
  const part = (s: string) => (s === "" ? [] : s.split(":").map((g) => parseInt(g, 16)))
  const left = part(head)
  const right = rest === undefined ? [] : part(rest)
  const fill = 8 - left.length - right.length
  if (rest === undefined ? left.length !== 8 : fill < 0) return undefined
  const groups = [...left, ...Array<number>(rest === undefined ? 0 : fill).fill(0), ...right]
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined
}

/** Why an IP address may not receive webhooks, or undefined when it may. */
export const refusedAddress = (address: string, allowPrivate: boolean): string | undefined => {
  const family = isIP(address)
  if (family === 0) return `${address} is not an IP address`
  const type = family === 4 ? "ipv4" : "ipv6"
  const v4 = family === 6 ? embeddedIpv4(address) : undefined
  if (v4 !== undefined && isIP(v4) === 4) {
    const inner = refusedAddress(v4, allowPrivate)
    return inner === undefined ? undefined : `${address} embeds ${v4}: ${inner}`
  }
  if (allowPrivate) return neverReachable.check(address, type) ? `${address} cannot receive requests` : undefined
  return blocked.check(address, type) ? `${address} is not a public address` : undefined
}

/** The host of a URL without IPv6 brackets. */
export const bareHost = (hostname: string) => hostname.replace(/^\[(.*)\]$/, "$1")

/** Names that always mean this machine, whatever a resolver says. */
export const isLocalName = (host: string) => {
  const lower = host.toLowerCase().replace(/\.$/, "")
  return lower === "localhost" || lower.endsWith(".localhost")
}
