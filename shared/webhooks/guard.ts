import dns from "node:dns";
import net from "node:net";
import { type AddressKind, classifyAddress, kindAllowed } from "./addresses.ts";

/** One resolved address of a host name. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (the system resolver, as `dns.lookup` does). */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) =>
  (await dns.promises.lookup(host, { all: true, order: "verbatim" })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

/** Longest webhook URL accepted. */
export const MAX_URL_LENGTH = 2048;

/** Names of cloud metadata services, refused before any lookup whatever the configuration. */
const METADATA_NAMES = new Set(["metadata.google.internal", "metadata", "metadata.goog", "instance-data"]);

/** Why a URL or address was refused; `invalid` is the URL itself, `refused` where it leads. */
export class WebhookUrlError extends Error {
  readonly kind: "invalid" | "refused";

  constructor(kind: "invalid" | "refused", message: string) {
    super(message);
    this.kind = kind;
    this.name = "WebhookUrlError";
  }
}

/** A webhook URL that passed the syntactic checks. */
export interface WebhookTarget {
  url: URL;
  /** The host without IPv6 brackets. */
  host: string;
  /** True when the host is an IP literal (no DNS). */
  literal: boolean;
}

/**
 * The syntactic rules for a webhook URL: absolute http or https, a host, no user name or password
 * (they would be sent to the receiver in the clear and logged), at most 2048 characters. The WHATWG
 * URL parser normalises obfuscated IPv4 forms (`0x7f.1`, `2130706433`) to dotted quads first, so
 * they are judged as the address they are.
 */
export function parseWebhookUrl(text: string): WebhookTarget {
  if (text.length > MAX_URL_LENGTH)
    throw new WebhookUrlError("invalid", `the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlError("invalid", `'${text.slice(0, 100)}' is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new WebhookUrlError(
      "invalid",
      `the URL must be http or https, not ${url.protocol.replace(/:$/, "")}`,
    );
  if (url.username !== "" || url.password !== "")
    throw new WebhookUrlError("invalid", "the URL must not carry a user name or password");
  if (url.hostname === "") throw new WebhookUrlError("invalid", "the URL has no host");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return { url, host, literal: net.isIP(host) !== 0 };
}

function describe(kind: AddressKind): string {
  return kind === "metadata" ? "a cloud metadata address" : `a ${kind} address`;
}

/**
 * The addresses a webhook to `target` may connect to, or a `refused` WebhookUrlError. A name is
 * resolved and refused if ANY of its addresses is refused, so a name with one public and one
 * private address cannot be used to reach the private one. Loopback and private addresses pass
 * only with `allowPrivate`; link-local, metadata, unspecified, multicast and reserved never do.
 */
export async function vetTarget(
  target: WebhookTarget,
  opts: { allowPrivate: boolean; resolve: Resolver },
): Promise<ResolvedAddress[]> {
  const name = target.host.toLowerCase().replace(/\.$/, "");
  if (METADATA_NAMES.has(name))
    throw new WebhookUrlError("refused", `'${target.host}' is a cloud metadata service`);
  let addresses: ResolvedAddress[];
  if (target.literal) {
    addresses = [{ address: target.host, family: net.isIPv6(target.host) ? 6 : 4 }];
  } else {
    try {
      addresses = await opts.resolve(target.host);
    } catch (err) {
      const code = (err as { code?: string }).code ?? "unknown error";
      throw new WebhookUrlError("refused", `'${target.host}' does not resolve (${code})`);
    }
    if (addresses.length === 0) throw new WebhookUrlError("refused", `'${target.host}' does not resolve`);
  }
  for (const a of addresses) {
    const kind = classifyAddress(a.address);
    if (!kindAllowed(kind, opts.allowPrivate)) {
      const via = target.literal ? " is" : ` resolves to ${a.address}, which is`;
      throw new WebhookUrlError(
        "refused",
        `'${target.host}'${via} ${describe(kind)}; webhooks may not reach it`,
      );
    }
  }
  return addresses;
}
