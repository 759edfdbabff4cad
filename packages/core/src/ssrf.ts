// Webhook target safety. Checked when a job is created, and isForbiddenAddress again
// at connect time on the resolved address (DNS rebinding). IP classification is ipaddr.js's, not ours.
import ipaddr from "ipaddr.js";

export type TargetCheck =
  | { ok: true; url: URL }
  | { ok: false; code: "invalid_url" | "forbidden_scheme" | "forbidden_target"; message: string };

const MAX_URL_LENGTH = 2048;

// Names that resolve to the machine itself, the local network, or a cloud metadata service.
const FORBIDDEN_NAMES = new Set(["localhost", "metadata.google.internal", "metadata", "instance-data"]);
const FORBIDDEN_SUFFIXES = [".localhost", ".internal", ".local", ".localdomain", ".home.arpa", ".lan"];

// IPv6 forms that carry an IPv4 address: judge them by the embedded address.
function embeddedIPv4(ip: ipaddr.IPv6, range: string): ipaddr.IPv4[] | null {
  const p = ip.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  switch (range) {
    case "ipv4Mapped": // ::ffff:a.b.c.d
    case "rfc6145": // ::ffff:0:a.b.c.d
      return [v4(p[6], p[7])];
    case "rfc6052": // NAT64 64:ff9b::a.b.c.d (the /48 local-use prefix is never global)
      return p[2] === 0 ? [v4(p[6], p[7])] : null;
    case "6to4": // 2002:AABB:CCDD::/48
      return [v4(p[1], p[2])];
    case "teredo": // server in bits 32-63, client obfuscated (inverted) in the last 32
      return [v4(p[2], p[3]), v4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
    default:
      return null;
  }
}

// Cloud metadata / host services on addresses that are otherwise public unicast: Azure's WireServer
// (168.63.129.16) answers every Azure VM. The others (AWS, GCP, Oracle, DO: 169.254.169.254; Alibaba:
// 100.100.100.200; AWS IPv6: fd00:ec2::254) already fall in private ranges.
const METADATA_V4 = new Set(["168.63.129.16"]);

function forbiddenV4(ip: ipaddr.IPv4): boolean {
  // Everything ipaddr does not call "unicast": 0/8, 10/8, 100.64/10, 127/8, 169.254/16 (incl. the
  // metadata address), 172.16/12, 192.168/16, 192.0.0/24, TEST-NETs, 198.18/15, multicast, 240/4, broadcast…
  return ip.range() !== "unicast" || METADATA_V4.has(ip.toString());
}

function forbiddenV6(ip: ipaddr.IPv6): boolean {
  const range = ip.range();
  const embedded = embeddedIPv4(ip, range);
  if (embedded) return embedded.some(forbiddenV4);
  if (range !== "unicast") return true; // loopback, ULA (incl. fd00:ec2::254), link-local, multicast, …
  // ipaddr calls anything unlisted "unicast"; only 2000::/3 is global unicast. This also catches the
  // deprecated IPv4-compatible form ::a.b.c.d.
  return !ip.match(ipaddr.IPv6.parse("2000::"), 3);
}

/** True for anything that is not a globally routable unicast address (or not an address at all). */
export function isForbiddenAddress(ip: string): boolean {
  let text = ip.trim();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  if (text.endsWith(".")) text = text.slice(0, -1);
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(text);
  } catch {
    return true;
  }
  return addr.kind() === "ipv4" ? forbiddenV4(addr as ipaddr.IPv4) : forbiddenV6(addr as ipaddr.IPv6);
}

/** A host that names a private place: a private, loopback or link-local IP literal, or a name such
 *  as localhost or *.internal. A public name (anything else) is false: it is public whatever it
 *  resolves to now. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.+$/, "");
  if (host.startsWith("[") || ipaddr.IPv4.isValidFourPartDecimal(host)) return isForbiddenAddress(host);
  return isForbiddenName(host);
}

function isForbiddenName(host: string): boolean {
  if (FORBIDDEN_NAMES.has(host)) return true;
  if (FORBIDDEN_SUFFIXES.some((s) => host.endsWith(s))) return true;
  // A single label ("router", "db") resolves through search domains into the local network.
  return !host.includes(".");
}

export function checkTargetUrl(raw: string, opts: { allowPrivate: boolean }): TargetCheck {
  if (typeof raw !== "string" || raw.length === 0)
    return { ok: false, code: "invalid_url", message: "target URL is empty" };
  if (raw.length > MAX_URL_LENGTH)
    return { ok: false, code: "invalid_url", message: `target URL is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, code: "invalid_url", message: "target URL is not a valid absolute URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return {
      ok: false,
      code: "forbidden_scheme",
      message: `target URL scheme ${url.protocol.replace(/:$/, "")} is not allowed; use http or https`,
    };
  }
  // Credentials in the URL would be logged and shown back in the API; headers are the place for them.
  if (url.username !== "" || url.password !== "") {
    return {
      ok: false,
      code: "invalid_url",
      message: "target URL must not contain credentials (user:pass@); send them as headers",
    };
  }
  if (opts.allowPrivate) return { ok: true, url };

  // The WHATWG parser has already normalised IPv4 in any encoding (127.1, 2130706433, 0x7f.1,
  // 0177.0.0.1) to dotted decimal and IPv6 to its bracketed canonical form.
  const host = url.hostname.toLowerCase().replace(/\.+$/, "");
  const forbidden = () => ({
    ok: false as const,
    code: "forbidden_target" as const,
    message: `target host ${url.hostname} is a private, loopback, link-local or metadata address`,
  });
  if (host.startsWith("[")) return isForbiddenAddress(host) ? forbidden() : { ok: true, url };
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return isForbiddenAddress(host) ? forbidden() : { ok: true, url };
  if (isForbiddenName(host)) return forbidden();
  return { ok: true, url };
}
