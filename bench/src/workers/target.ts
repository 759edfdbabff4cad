// The local webhook target for the webhooks scenario: a bare keep-alive node:http server answering
// 200 to everything, in its own process so its CPU is not charged to the sender being measured. With
// TARGET_TLS_KEY and TARGET_TLS_CERT (PEM file paths) it serves HTTPS instead (studies/webhooks-cpu.ts).
import { readFileSync } from "node:fs";
import { createServer, type RequestListener } from "node:http";
import { createServer as createTlsServer } from "node:https";

let received = 0;
const answer: RequestListener = (req, res) => {
  req.resume();
  req.on("end", () => {
    received++;
    res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
    res.end("ok");
  });
};
const { TARGET_TLS_KEY: key, TARGET_TLS_CERT: cert } = process.env;
const server =
  key && cert ? createTlsServer({ key: readFileSync(key), cert: readFileSync(cert) }, answer) : createServer(answer);
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const addr = server.address();
  process.send!({ kind: "listening", port: typeof addr === "object" && addr ? addr.port : 0 });
});
process.on("message", (m) => {
  if (m === "count") process.send!({ kind: "count", received });
  if (m === "stop") {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
