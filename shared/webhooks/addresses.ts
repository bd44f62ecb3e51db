import net from "node:net";

/**
 * What an IP address reaches, for the webhook SSRF guard. `public` is the only kind always
 * allowed; `loopback` and `private` are allowed only with SVC_WEBHOOK_ALLOW_PRIVATE=true (local
 * development and tests); every other kind is always refused.
 */
export type AddressKind =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "metadata"
  | "unspecified"
  | "multicast"
  | "reserved";

/** Cloud metadata services, refused whatever the configuration. */
const METADATA = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"]);

// [first address, prefix length, kind], most specific first where ranges nest.
const V4_RANGES: [string, number, AddressKind][] = [
  ["0.0.0.0", 8, "unspecified"], // "this network": 0.0.0.0 reaches the local host on Linux
  ["127.0.0.0", 8, "loopback"],
  ["10.0.0.0", 8, "private"],
  ["172.16.0.0", 12, "private"],
  ["192.168.0.0", 16, "private"],
  ["100.64.0.0", 10, "private"], // carrier-grade NAT, shared address space
  ["198.18.0.0", 15, "private"], // benchmarking networks
  ["192.0.0.0", 24, "reserved"], // IETF protocol assignments
  ["169.254.0.0", 16, "link-local"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"], // includes 255.255.255.255
];

function v4ToInt(address: string): number {
  return address.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
}

function classifyV4(address: string): AddressKind {
  if (METADATA.has(address)) return "metadata";
  const n = v4ToInt(address);
  for (const [first, bits, kind] of V4_RANGES) {
    const size = 2 ** (32 - bits);
    const start = v4ToInt(first);
    if (n >= start && n < start + size) return kind;
  }
  return "public";
}

/** The 16 bytes of an IPv6 address (any textual form, with or without a zone). */
export function ipv6Bytes(address: string): Uint8Array {
  let text = address.replace(/%.*$/, "").toLowerCase();
  const bytes = new Uint8Array(16);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = v4ToInt(dotted[0]); // the group is the whole match
    text = `${text.slice(0, dotted.index)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const groups = (s: string | undefined) => (s ? s.split(":").filter((g) => g !== "") : []);
  const front = groups(head);
  const back = groups(tail);
  const all = [...front, ...Array(8 - front.length - back.length).fill("0"), ...back];
  all.forEach((g, i) => {
    const v = Number.parseInt(g, 16);
    bytes[i * 2] = v >> 8;
    bytes[i * 2 + 1] = v & 0xff;
  });
  return bytes;
}

const v4Of = (b: Uint8Array, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
const allZero = (b: Uint8Array, from: number, to: number) => b.slice(from, to).every((x) => x === 0);

/** The big-endian 16-bit group of IPv6 bytes `b` at byte `at`. */
function group(b: Uint8Array, at: number): number {
  return new DataView(b.buffer, b.byteOffset, b.byteLength).getUint16(at);
}

function classifyV6(address: string): AddressKind {
  const b = ipv6Bytes(address);
  const canonical = canonicalV6(b);
  if (METADATA.has(canonical)) return "metadata";
  if (allZero(b, 0, 16)) return "unspecified";
  if (allZero(b, 0, 15) && b[15] === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d) and the deprecated IPv4-compatible form (::a.b.c.d) reach an
  // IPv4 address; so do NAT64 (64:ff9b::/96) and 6to4 (2002::/16): judge the embedded address.
  if (allZero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return classifyV4(v4Of(b, 12));
  if (allZero(b, 0, 12)) return classifyV4(v4Of(b, 12));
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && allZero(b, 4, 12))
    return classifyV4(v4Of(b, 12));
  if (b[0] === 0x20 && b[1] === 0x02) return classifyV4(v4Of(b, 2));
  if (b[0] === 0xff) return "multicast";
  const first16 = group(b, 0);
  if ((first16 & 0xffc0) === 0xfe80) return "link-local"; // fe80::/10
  if ((first16 & 0xffc0) === 0xfec0) return "private"; // fec0::/10, deprecated site-local
  if ((first16 & 0xfe00) === 0xfc00) return "private"; // fc00::/7, unique local
  if (b[0] === 0x01 && allZero(b, 1, 8)) return "reserved"; // 100::/64, discard-only
  return "public";
}

/** Lower-case, zero-compressed text of 16 IPv6 bytes (RFC 5952 enough for comparisons). */
function canonicalV6(b: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(group(b, i).toString(16));
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best.len && j - i > 1) best = { at: i, len: j - i };
    i = j;
  }
  if (best.at < 0) return groups.join(":");
  return `${groups.slice(0, best.at).join(":")}::${groups.slice(best.at + best.len).join(":")}`;
}

/** What `address` (an IPv4 or IPv6 literal) reaches; throws for something that is not an IP. */
export function classifyAddress(address: string): AddressKind {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = net.isIP(bare.replace(/%.*$/, ""));
  if (family === 4) return classifyV4(bare);
  if (family === 6) return classifyV6(bare);
  throw new TypeError(`not an IP address: ${address}`);
}

/** True when a webhook may be sent to an address of this kind. */
export function kindAllowed(kind: AddressKind, allowPrivate: boolean): boolean {
  return kind === "public" || (allowPrivate && (kind === "loopback" || kind === "private"));
}
