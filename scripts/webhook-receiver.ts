// A local webhook receiver for the README's quickstart: verifies each delivery with the SDK's
// verifyWebhook against SECRET (the tenant's signing secret) and prints one line per delivery.
//   SECRET=whsec_… npx tsx scripts/webhook-receiver.ts [port]   (default port 9000)
import { createServer } from "node:http";
import { verifyWebhook } from "@fairway/sdk";

const secret = process.env.SECRET;
if (!secret) {
  console.error("set SECRET to the tenant's signing secret (GET /v1/admin/tenants/:id/signing-secret)");
  process.exit(1);
}
const port = Number(process.argv[2] ?? 9000);

createServer((req, res) => {
  if (req.method === "GET" && req.url === "/") return void res.end("receiver up\n"); // readiness probe
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", async () => {
    try {
      await verifyWebhook({ secret, headers: req.headers, body });
      console.log(`verified ${req.method} ${req.url} webhook-id=${req.headers["webhook-id"]} ${body}`);
      res.end("ok");
    } catch (err) {
      console.log(`REJECTED ${req.method} ${req.url}: ${(err as Error).message}`);
      res.statusCode = 400;
      res.end("bad signature");
    }
  });
}).listen(port, "127.0.0.1", () => console.log(`receiver on http://127.0.0.1:${port}`));
