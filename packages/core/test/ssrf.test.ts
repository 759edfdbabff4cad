import { describe, expect, test } from "vitest";
import { checkTargetUrl, isForbiddenAddress } from "../src/ssrf.ts";

const FORBIDDEN_URLS = [
  "http://127.0.0.1/",
  "http://127.1/",
  "http://2130706433/",
  "http://0x7f.1/",
  "http://0177.0.0.1/",
  "http://0x7f000001/",
  "http://%31%32%37.0.0.1/",
  "http://0/",
  "http://0.0.0.0:8080/",
  "http://10.0.0.5/",
  "http://172.16.3.4/",
  "http://172.31.255.255/",
  "http://192.168.1.1/",
  "http://169.254.169.254/latest/meta-data/",
  "http://169.254.169.254./",
  "http://100.64.0.1/",
  "http://198.18.0.1/",
  "http://224.0.0.1/",
  "http://255.255.255.255/",
  "http://240.0.0.1/",
  "http://[::1]/",
  "http://[::]/",
  "http://[::ffff:127.0.0.1]/",
  "http://[::ffff:a9fe:a9fe]/",
  "http://[::ffff:10.0.0.1]/",
  "http://[::127.0.0.1]/",
  "http://[fd00::1]/",
  "http://[fd00:ec2::254]/",
  "http://[fe80::1]/",
  "http://[ff02::1]/",
  "http://[64:ff9b::7f00:1]/",
  "http://[2002:7f00:1::]/",
  "http://[2001:db8::1]/",
  "http://localhost/",
  "http://LOCALHOST./",
  "http://localhost:3000/hook",
  "http://api.localhost/",
  "http://metadata.google.internal/computeMetadata/v1/",
  "http://db.internal/",
  "http://printer.local/",
  "http://intranet/",
  "https://127.0.0.1:8443/",
  // More encodings of the same few addresses (WHATWG normalises all of them; ipaddr.js judges).
  "http://0x7f.0x0.0x0.0x1/",
  "http://017700000001/",
  "http://127.000.000.001/",
  "http://①②⑦.0.0.1/",
  "http://１２７.０.０.１/",
  "http://127.0.0.1%2e/",
  "http://0x7f.1./",
  "http://[0:0:0:0:0:ffff:127.0.0.1]/",
  "http://[::ffff:0:127.0.0.1]/",
  "http://[0::1]/",
  "http://[::ffff:100.64.0.1]/",
  "http://100.100.100.200/",
  "http://168.63.129.16/",
  "http://localhost%2e/",
];

describe("checkTargetUrl with allowPrivate=false", () => {
  test.each(FORBIDDEN_URLS)("rejects %s", (u) => {
    const r = checkTargetUrl(u, { allowPrivate: false });
    expect(r).toMatchObject({ ok: false, code: "forbidden_target" });
  });

  test.each([
    "https://example.com/hook",
    "http://93.184.216.34/",
    "https://example.com./x?y=1",
    "https://[2606:4700:4700::1111]/",
    "http://8.8.8.8:8080/",
  ])("accepts public %s", (u) => {
    const r = checkTargetUrl(u, { allowPrivate: false });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.url).toBeInstanceOf(URL);
  });
});

describe("checkTargetUrl with allowPrivate=true", () => {
  test.each(FORBIDDEN_URLS)("allows %s", (u) => {
    expect(checkTargetUrl(u, { allowPrivate: true }).ok).toBe(true);
  });
});

describe("checkTargetUrl rejects regardless of allowPrivate", () => {
  test.each([true, false])("allowPrivate=%s", (allowPrivate) => {
    const c = (u: string) => {
      const r = checkTargetUrl(u, { allowPrivate });
      return r.ok ? "ok" : r.code;
    };
    expect(c("ftp://example.com/")).toBe("forbidden_scheme");
    expect(c("file:///etc/passwd")).toBe("forbidden_scheme");
    expect(c("gopher://example.com/")).toBe("forbidden_scheme");
    expect(c("javascript:alert(1)")).toBe("forbidden_scheme");
    expect(c("https://user:pass@example.com/")).toBe("invalid_url");
    expect(c("https://user@example.com/")).toBe("invalid_url");
    expect(c("not a url")).toBe("invalid_url");
    expect(c("/relative/path")).toBe("invalid_url");
    expect(c("")).toBe("invalid_url");
    expect(c(`https://example.com/${"a".repeat(2048)}`)).toBe("invalid_url");
    expect(c(`https://example.com/${"a".repeat(2000)}`)).toBe("ok");
  });
});

describe("isForbiddenAddress (also used at connect time)", () => {
  test.each([
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.0.1",
    "169.254.169.254",
    "169.254.1.1",
    "100.64.0.1",
    "100.127.255.255",
    "0.0.0.0",
    "0.1.2.3",
    "255.255.255.255",
    "224.0.0.251",
    "239.1.1.1",
    "240.0.0.1",
    "198.18.0.1",
    "198.19.255.255",
    "192.0.2.1",
    "192.0.0.8",
    "::",
    "::1",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "fd00:ec2::254",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:a9fe:a9fe",
    "::127.0.0.1",
    "64:ff9b::10.0.0.1",
    "64:ff9b:1::1",
    "2002:c0a8:101::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2" /* teredo, client 192.0.2.45 */,
    "2001:db8::1",
    "not an ip",
    "",
    "168.63.129.16",
    "::ffff:168.63.129.16",
  ])("forbids %s", (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  test.each([
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
    "[2a00:1450::1]",
  ])("allows %s", (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
  });
});
