// The trigger page names the trace its attempts belong to, linked through FAIRWAY_TRACE_URL_TEMPLATE,
// and shows a handler attempt's logs (docs/observability.md). A real server process exporting to a
// real OTLP receiver, a real handler worker, Chromium. FAIRWAY_SCREENSHOTS=docs/images saves the
// picture docs/observability.md shows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorker, type Worker } from "@fairway/worker";
import { startOtlpReceiver } from "../support/otlp-receiver.ts";
import { until } from "../support/until.ts";
import { shot, useDashboard } from "./support.ts";

const otlp = await startOtlpReceiver();
const TEMPLATE = "https://jaeger.example.com/trace/{traceId}";
const d = useDashboard({
  signedIn: true,
  env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, FAIRWAY_TRACE_URL_TEMPLATE: TEMPLATE },
});
let worker: Worker;

beforeAll(async () => {
  worker = await createWorker({
    databaseUrl: d.db.url,
    pollMs: 50,
    logLevel: "error",
    handlers: {
      "report.build": async (ctx) => {
        ctx.log("building report for", (ctx.payload as { account: string }).account);
        ctx.log("rows fetched", { rows: 1284, ms: 212 });
        if (ctx.attempt === 1) {
          ctx.log("upstream answered 503; this attempt fails and is retried");
          throw new Error("upstream 503");
        }
        ctx.log("report stored", { key: "reports/2026-12/acme.pdf" });
      },
    },
  }).start();
}, 60_000);

afterAll(async () => {
  await worker?.stop(0);
  await otlp.close();
});

describe("trigger page", () => {
  it("shows the trace id, linked through the template, and each attempt's handler logs", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const job = await d.acme.jobs.create(
      {
        name: "monthly-report",
        type: "report.build",
        schedule: { delayMs: 0 },
        payload: { account: "acme" },
        retry: { maxAttempts: 3, initialDelayMs: 50, maxDelayMs: 100 },
      },
      { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    );
    const [t] = (
      await until(
        () => d.acme.jobs.triggers(job.id),
        (p) => p.data[0]?.status === "succeeded",
      )
    ).data;
    const page = d.page;
    await page.goto(`${d.server.url}/dashboard/admin/t/acme/triggers/${t.id}`);
    const link = page.getByRole("link", { name: traceId });
    expect(await link.getAttribute("href")).toBe(`https://jaeger.example.com/trace/${traceId}`);
    const logs = await page.locator("pre.handler-logs").allTextContents();
    expect(logs).toEqual([
      'building report for acme\nrows fetched {"rows":1284,"ms":212}\nupstream answered 503; this attempt fails and is retried',
      'building report for acme\nrows fetched {"rows":1284,"ms":212}\nreport stored {"key":"reports/2026-12/acme.pdf"}',
    ]);
    await shot(page, "trigger-trace");
  });

  it("names a trigger's own trace when the server traces, even without a create context", async () => {
    const job = await d.acme.jobs.create({
      name: "untraced",
      schedule: { delayMs: 0 },
      target: { url: `${d.receiver.url}/flaky/1/trace-page` },
      retry: { maxAttempts: 3, initialDelayMs: 50, maxDelayMs: 100 },
    });
    const [t] = (
      await until(
        () => d.acme.jobs.triggers(job.id),
        (p) => p.data[0]?.status === "succeeded",
      )
    ).data;
    await d.page.goto(`${d.server.url}/dashboard/admin/t/acme/triggers/${t.id}`);
    const href = await d.page.locator('a[href^="https://jaeger.example.com/trace/"]').getAttribute("href");
    const shown = href!.split("/").at(-1)!;
    expect(shown).toMatch(/^[0-9a-f]{32}$/);
    // The id shown is the trace the attempts were exported in.
    const spans = await until(
      async () => otlp.spans.filter((s) => s.attributes["fairway.trigger.id"] === t.id && s.name === "POST"),
      (s) => s.length >= 2,
    );
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([shown]));
  });
});
