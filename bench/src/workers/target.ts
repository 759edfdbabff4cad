// The local webhook target for the webhooks scenario: a bare keep-alive node:http server answering
// 200 to everything, in its own process so its CPU is not charged to the sender being measured.
import { createServer } from "node:http";

let received = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    received++;
    res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
    res.end("ok");
  });
});
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
