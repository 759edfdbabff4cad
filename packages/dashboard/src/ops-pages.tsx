/** @jsxImportSource hono/jsx */
// The operator's pools and executors: each pool's concurrency, saturation and backlog with a pause and
// resume button, and every executor live or recently lost or stopped, with its heartbeat and load.
// Pausing only flips the pool's flag (store pool-pause.ts): the claim takes nothing of a paused type,
// what is running finishes, and new fires wait as pending until it is resumed.
import { Hono, type Context } from "hono";
import { COUNT_CAP, DEFAULT_POOL, listExecutors, poolOverview, type ExecutorRow } from "@fairway/store";
import type { DashEnv } from "./deps.ts";
import { fmtCount, fmtMs, pct } from "./format.ts";
import { When } from "./time.tsx";
import { adminNav, Page, PostForm, StatusChip } from "./layout.tsx";

export const opsPages = new Hono<DashEnv>();

function flashOf(c: Context): { kind: "ok"; text: string } | null {
  const done = c.req.query("done");
  const type = c.req.query("type")?.slice(0, 63) ?? "";
  if (done === "paused")
    return { kind: "ok", text: `Pool ${type} paused: nothing of it is claimed; running work finishes.` };
  if (done === "resumed") return { kind: "ok", text: `Pool ${type} resumed: its due work is claimed again.` };
  return null;
}

opsPages.get("/pools", async (c) => {
  const pools = await poolOverview(c.var.dash.db, DEFAULT_POOL);
  return c.html(
    <Page title="Pools" scope={c.var.scope} nav={adminNav()} current="/dashboard/admin/pools" flash={flashOf(c)}>
      <h1>Pools</h1>
      <p class="sub">
        One pool per job type. Concurrency is per executor; saturation is running ÷ concurrency of one executor. A
        paused pool claims nothing: running work finishes, new fires wait as due until it is resumed. A handler pool
        reads "no worker" when no worker has served it for 30 s: its work waits as due until one starts.
      </p>
      <div data-live="/dashboard/admin/live/pools" data-every="3000">
        <PoolTable pools={pools} csrf={c.var.csrf} />
      </div>
    </Page>,
  );
});

opsPages.get("/live/pools", async (c) =>
  c.html(<PoolTable pools={await poolOverview(c.var.dash.db, DEFAULT_POOL)} csrf={c.var.csrf} />),
);

function PoolTable(props: { pools: Awaited<ReturnType<typeof poolOverview>>; csrf: string }) {
  if (props.pools.length === 0)
    return <p class="card empty">No pools yet: a pool appears with its first job or PUT /v1/admin/pools/:type.</p>;
  return (
    <div class="table-wrap">
      <table class="stack">
        <caption class="sr">Pools</caption>
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">State</th>
            <th scope="col" class="num">
              Concurrency
            </th>
            <th scope="col" class="num">
              Running
            </th>
            <th scope="col" class="num">
              Saturation
            </th>
            <th scope="col" class="num">
              Due
            </th>
            <th scope="col" class="num">
              Timeout
            </th>
            <th scope="col" class="num">
              Max attempts
            </th>
            <th scope="col">
              <span class="sr">Action</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.pools.map((p) => {
            const action = p.paused ? "resume" : "pause";
            const label = `${p.paused ? "Resume" : "Pause"} pool ${p.type}`;
            return (
              <tr>
                <td data-label="Type" class="mono">
                  {p.type}
                </td>
                <td data-label="State">
                  {/* A handler pool whose workers stopped stamping it runs nothing, paused or not. */}
                  <StatusChip status={p.paused ? "paused" : p.served === false ? "no worker" : "active"} />
                </td>
                <td data-label="Concurrency" class="num">
                  {p.concurrency}
                </td>
                <td data-label="Running" class="num">
                  {p.running}
                </td>
                <td data-label="Saturation" class="num">
                  {pct(p.running / Math.max(1, p.concurrency))}
                </td>
                <td data-label="Due" class="num">
                  {fmtCount(p.due, COUNT_CAP)}
                </td>
                <td data-label="Timeout" class="num">
                  {fmtMs(p.timeoutMs)}
                </td>
                <td data-label="Max attempts" class="num">
                  {p.maxAttempts}
                </td>
                <td data-label="Action">
                  <PostForm
                    action={`/dashboard/admin/pools/${encodeURIComponent(p.type)}/${action}`}
                    csrf={props.csrf}
                    class="inline"
                    label={label}
                  >
                    <button type="submit" class={p.paused ? "" : "secondary"} aria-label={label}>
                      {p.paused ? "Resume" : "Pause"}
                    </button>
                  </PostForm>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

for (const action of ["pause", "resume"] as const) {
  opsPages.post(`/pools/:type/${action}`, async (c) => {
    const { type } = await c.var.dash.commands.setPoolPaused(c.req.param("type"), action === "pause");
    return c.redirect(
      `/dashboard/admin/pools?done=${action === "pause" ? "paused" : "resumed"}&type=${encodeURIComponent(type)}`,
      303,
    );
  });
}

opsPages.get("/executors", async (c) => {
  const d = c.var.dash;
  const rows = await listExecutors(d.db);
  return c.html(
    <Page title="Executors" scope={c.var.scope} nav={adminNav()} current="/dashboard/admin/executors">
      <h1>Executors</h1>
      <p class="sub">
        Live executors, and those lost or stopped in the last hour. An executor is lost when its heartbeat is older than
        its timeout; its triggers are then reaped and run again (or, sent at most once, ended as unknown).
      </p>
      <div data-live="/dashboard/admin/live/executors" data-every="3000">
        <ExecutorTable rows={rows} nowMs={d.now()} />
      </div>
    </Page>,
  );
});

opsPages.get("/live/executors", async (c) =>
  c.html(<ExecutorTable rows={await listExecutors(c.var.dash.db)} nowMs={c.var.dash.now()} />),
);

function ExecutorTable(props: { rows: ExecutorRow[]; nowMs: number }) {
  if (props.rows.length === 0)
    return <p class="card empty">No executor has sent a heartbeat in the last hour. Start one with npm start.</p>;
  return (
    <div class="table-wrap">
      <table class="stack">
        <caption class="sr">Executors, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Executor</th>
            <th scope="col">Status</th>
            <th scope="col">Host / PID</th>
            <th scope="col">Version</th>
            <th scope="col">Started</th>
            <th scope="col">Last heartbeat</th>
            <th scope="col">Pools: in flight / concurrency</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((e) => {
            const pools = Object.entries(e.pools).sort(([a], [b]) => (a < b ? -1 : 1));
            return (
              <tr>
                <td data-label="Executor" class="mono">
                  {e.id}
                </td>
                <td data-label="Status">
                  <StatusChip status={e.status} />
                </td>
                <td data-label="Host / PID">
                  {e.host} <span class="mono">{e.pid}</span>
                </td>
                <td data-label="Version" class="mono">
                  {e.version}
                </td>
                <td data-label="Started">
                  <When d={e.startedAt} />
                </td>
                <td data-label="Last heartbeat">
                  <When d={e.heartbeatAt} />
                  <br />
                  <span class="muted">
                    {fmtMs(Math.max(0, props.nowMs - e.heartbeatAt.getTime()))} ago, timeout{" "}
                    {fmtMs(e.heartbeatTimeoutMs)}
                  </span>
                </td>
                <td data-label="Pools">
                  {pools.length === 0 ? (
                    "—"
                  ) : (
                    <ul class="plain">
                      {pools.map(([type, p]) => (
                        <li>
                          <span class="mono">{type}</span> {p.inFlight} / {p.concurrency}
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
