// 12. dashboard — first paint of the dashboard's main views in Chromium, on the embedded default (the
// real server process as `npm start` runs it, its own PostgreSQL) with one tenant holding 10k jobs
// and some history: dead letters and successful runs. Each view is loaded several times in a signed-in
// browser; a view's figure is the median first-contentful-paint (from navigation start: the server's
// answer, the page's CSS and its first layout), the scenario's the slowest view's.
import { Agent, request } from "undici";
import type { Page } from "playwright-core";
import { openBrowser } from "../../../test/support/browser.ts";
import { startServerProcess } from "../../../test/support/server-process.ts";
import { startReceiver } from "../../../test/support/receiver.ts";
import { until } from "../../../test/support/until.ts";
import type { BenchContext, Figures, Scenario } from "../lib/scenario.ts";

const IN_FLIGHT = 20;
const LOADS = 7;

/** One API call; a 429 (admission: the tenant's share is busy) is tried again after its Retry-After,
 *  as the SDK does. */
async function call(agent: Agent, url: string, token: string, body?: object): Promise<Record<string, unknown>> {
  for (let tries = 1; ; tries++) {
    const res = await request(url, {
      method: body ? "POST" : "GET",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: body ? JSON.stringify(body) : undefined,
      dispatcher: agent,
    });
    const json = (await res.body.json()) as Record<string, unknown>;
    if (res.statusCode === 429 && tries < 10) {
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers["retry-after"] ?? 1)));
      continue;
    }
    if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${JSON.stringify(json)}`);
    return json;
  }
}

/** The median first-contentful-paint of `path`, in ms, over LOADS loads after one not counted. */
async function firstPaint(page: Page, url: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i <= LOADS; i++) {
    const res = await page.goto(url, { waitUntil: "load" });
    if (!res?.ok()) throw new Error(`${url}: ${res?.status()}`);
    // The entry is recorded with the first frame, which may come after the load event.
    const fcp = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          new PerformanceObserver((list) => {
            const e = list.getEntriesByName("first-contentful-paint")[0];
            if (e) resolve(e.startTime);
          }).observe({ type: "paint", buffered: true });
          setTimeout(() => resolve(Number.NaN), 5000);
        }),
    );
    if (Number.isNaN(fcp)) throw new Error(`${url}: no first-contentful-paint entry`);
    if (i > 0) times.push(fcp);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

export const dashboard: Scenario = {
  name: "dashboard",
  title: "first paint (ms) of the dashboard's views in Chromium, embedded default, one tenant with 10k jobs",
  headline: { label: "dashboard", keys: ["fcp_ms_max", "jobs"] },
  async run(ctx: BenchContext) {
    const jobs = ctx.quick ? 1_000 : 10_000;
    const receiver = await startReceiver();
    // API rate limit off: the seeding is not what is measured.
    const server = await startServerProcess({ FAIRWAY_POLL_MS: "50", FAIRWAY_API_RATE_PER_SECOND: "0" });
    const agent = new Agent({ connections: IN_FLIGHT, keepAliveTimeout: 30_000 });
    const browser = await openBrowser();
    try {
      const admin = server.adminToken;
      await call(agent, `${server.url}/v1/admin/tenants`, admin, { id: "bench", name: "Bench", maxJobs: 100_000 });
      const { key } = (await call(agent, `${server.url}/v1/admin/tenants/bench/keys`, admin, {})) as { key: string };
      // The jobs, through the API: cron jobs firing once a year, so none is due while the pages load.
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < jobs) {
            const i = next++;
            await call(agent, `${server.url}/v1/jobs`, key, {
              name: `report-${String(i).padStart(5, "0")}`,
              schedule: { cron: `${i % 60} ${i % 24} 1 1 *`, timezone: i % 2 ? "Europe/Berlin" : "UTC" },
              target: { url: `${receiver.url}/ok` },
            });
          }
        }),
      );
      // History: 50 one-time runs that succeed and 50 that are dead letters.
      const history = ["ok", "status/400"].flatMap((path) =>
        Array.from({ length: 50 }, (_, i) => ({
          name: `once-${path.replace("/", "-")}-${i}`,
          schedule: { delayMs: 0 },
          target: { url: `${receiver.url}/${path}` },
          retry: { maxAttempts: 1 },
        })),
      );
      const once = await Promise.all(history.map((j) => call(agent, `${server.url}/v1/jobs`, key, j)));
      await until(
        () => call(agent, `${server.url}/v1/dead-letters?limit=100`, key),
        (r) => (r.data as unknown[]).length === 50,
        60_000,
        "50 dead letters",
      );
      ctx.log(`${jobs} jobs and 100 runs through the API`);

      const page = await browser.context.newPage();
      await page.goto(`${server.url}/dashboard/login`);
      await page.getByLabel("Admin token").fill(admin);
      await Promise.all([page.waitForURL(/\/dashboard\/admin/), page.getByRole("button", { name: "Sign in" }).click()]);
      const base = `${server.url}/dashboard/admin`;
      const views: Array<[string, string]> = [
        ["tenants", base],
        ["jobs", `${base}/t/bench/jobs`],
        ["jobs_search", `${base}/t/bench/jobs?q=report-09&status=active`],
        // Failing only: a walk of the tenant's 10k jobs for the 50 with a failure streak.
        ["jobs_failing", `${base}/t/bench/jobs?failing=1`],
        ["job", `${base}/t/bench/jobs/${String(once[0].id)}`],
        ["dead_letters", `${base}/dead-letters`],
        ["tenant_dead_letters", `${base}/t/bench/dead-letters`],
        ["activity", `${base}/activity`],
        ["activity_24h", `${base}/activity?range=24h`],
        ["activity_7d_tenant", `${base}/activity?range=7d&tenant=bench`],
        ["job_new", `${base}/t/bench/jobs/new`],
        ["job_edit", `${base}/t/bench/jobs/${String(once[0].id)}/edit`],
        ["usage", `${base}/t/bench/usage`],
      ];
      const figures: Figures = { jobs };
      for (const [name, url] of views) {
        figures[`fcp_ms_${name}`] = await firstPaint(page, url);
        ctx.log(`${name}: first paint ${figures[`fcp_ms_${name}`].toFixed(0)} ms`);
      }
      figures.fcp_ms_max = Math.max(...views.map(([name]) => figures[`fcp_ms_${name}`]));
      return figures;
    } finally {
      await browser.close();
      await agent.close();
      await server.stop();
      await receiver.close();
    }
  },
};
