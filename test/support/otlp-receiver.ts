// A real OTLP/HTTP trace receiver for tests: POST /v1/traces in either encoding the exporters send,
// application/x-protobuf (decoded here from the protobuf wire format, field numbers from
// opentelemetry-proto's trace/v1/trace.proto and common/v1/common.proto) or application/json (OTLP's
// JSON mapping: ids as hex). Every span it was sent, flattened, with the encoding it came in.
import { createServer, type Server } from "node:http";

type AttrValue = string | number | boolean | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, AttrValue>;
  links: Array<{ traceId: string; spanId: string }>;
  /** Status code: 0 unset, 1 ok, 2 error. */
  status: number;
  service: string;
  encoding: "protobuf" | "json";
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Raw request bodies, as received (for searching for leaked values). */
  bodies: Buffer[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: Buffer[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      bodies.push(raw);
      if (req.method !== "POST" || req.url !== "/v1/traces") return void res.writeHead(404).end();
      const type = String(req.headers["content-type"] ?? "");
      try {
        if (type.startsWith("application/json")) {
          spans.push(...fromJson(JSON.parse(raw.toString("utf8"))));
          res.writeHead(200, { "content-type": "application/json" }).end("{}");
        } else {
          spans.push(...fromProtobuf(raw));
          res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
        }
      } catch (err) {
        res.writeHead(400).end(String(err));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

// --- OTLP JSON -------------------------------------------------------------------------------------

interface JsonKv {
  key: string;
  value: Record<string, unknown>;
}

function jsonValue(v: Record<string, unknown>): AttrValue {
  if ("stringValue" in v) return v.stringValue as string;
  if ("boolValue" in v) return v.boolValue as boolean;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  return null;
}

function jsonAttrs(list: JsonKv[] | undefined): Record<string, AttrValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));
}

function fromJson(body: {
  resourceSpans?: Array<{
    resource?: { attributes?: JsonKv[] };
    scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
  }>;
}): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const service = String(jsonAttrs(rs.resource?.attributes)["service.name"] ?? "");
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        out.push({
          traceId: String(s.traceId ?? ""),
          spanId: String(s.spanId ?? ""),
          parentSpanId: String(s.parentSpanId ?? ""),
          name: String(s.name),
          kind: Number(s.kind ?? 0),
          attributes: jsonAttrs(s.attributes as JsonKv[]),
          links: ((s.links as Array<{ traceId: string; spanId: string }>) ?? []).map((l) => ({
            traceId: l.traceId,
            spanId: l.spanId,
          })),
          status: Number((s.status as { code?: number } | undefined)?.code ?? 0),
          service,
          encoding: "json",
        });
  }
  return out;
}

// --- protobuf wire format --------------------------------------------------------------------------

type Field = { no: number; wire: number; int?: bigint; bytes?: Buffer };

/** The fields of one message, in order (repeated fields appear once per element). */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let shift = 0n;
    let v = 0n;
    for (;;) {
      const b = buf[i++];
      if (b === undefined) throw new Error("truncated varint");
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, int: varint() });
    else if (wire === 1) {
      out.push({ no, wire, int: buf.readBigUInt64LE(i), bytes: buf.subarray(i, i + 8) });
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, wire, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 5) {
      out.push({ no, wire, int: BigInt(buf.readUInt32LE(i)) });
      i += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const all = (f: Field[], no: number) => f.filter((x) => x.no === no);
const one = (f: Field[], no: number) => f.find((x) => x.no === no);
const text = (f: Field[], no: number) => one(f, no)?.bytes?.toString("utf8") ?? "";
const hex = (f: Field[], no: number) => one(f, no)?.bytes?.toString("hex") ?? "";

/** common.v1.AnyValue: 1 string, 2 bool, 3 int64, 4 double. */
function anyValue(buf: Buffer): AttrValue {
  const f = fields(buf);
  const s = one(f, 1);
  if (s) return s.bytes!.toString("utf8");
  const b = one(f, 2);
  if (b) return b.int !== 0n;
  const n = one(f, 3);
  if (n) return Number(BigInt.asIntN(64, n.int!));
  const d = one(f, 4);
  if (d) return d.bytes!.readDoubleLE(0);
  return null;
}

/** repeated common.v1.KeyValue (1 key, 2 value). */
function kvs(list: Field[]): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of list) {
    const f = fields(kv.bytes!);
    const v = one(f, 2);
    out[text(f, 1)] = v ? anyValue(v.bytes!) : null;
  }
  return out;
}

/** ExportTraceServiceRequest: 1 ResourceSpans (1 Resource{1 attributes}, 2 ScopeSpans{2 Span}).
 *  Span: 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 9 attributes, 13 links
 *  (Link: 1 trace_id, 2 span_id), 15 status (Status: 3 code). */
function fromProtobuf(buf: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of all(fields(buf), 1)) {
    const rf = fields(rs.bytes!);
    const resource = one(rf, 1);
    const service = String((resource ? kvs(all(fields(resource.bytes!), 1)) : {})["service.name"] ?? "");
    for (const ss of all(rf, 2))
      for (const sp of all(fields(ss.bytes!), 2)) {
        const f = fields(sp.bytes!);
        const status = one(f, 15);
        out.push({
          traceId: hex(f, 1),
          spanId: hex(f, 2),
          parentSpanId: hex(f, 4),
          name: text(f, 5),
          kind: Number(one(f, 6)?.int ?? 0n),
          attributes: kvs(all(f, 9)),
          links: all(f, 13).map((l) => {
            const lf = fields(l.bytes!);
            return { traceId: hex(lf, 1), spanId: hex(lf, 2) };
          }),
          status: status ? Number(one(fields(status.bytes!), 3)?.int ?? 0n) : 0,
          service,
          encoding: "protobuf",
        });
      }
  }
  return out;
}
