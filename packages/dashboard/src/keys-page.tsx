/** @jsxImportSource hono/jsx */
// A tenant's fairness keys: the top keys by recent worker time with running, due, lag and the policy in
// force (refreshed live), and forms for one key's override and for the tenant's key defaults. The
// forms go through the API's own functions (DashboardDeps.commands.putKeyPolicy, patchKeyDefaults,
// deleteKeyPolicy): the same bounds, refused with the same words.
import type { Context } from "hono";
import { Hono } from "hono";
import {
  getKeyDefaults,
  getKeyInfo,
  getTenant,
  listKeys,
  topKeys,
  type Db,
  type KeyInfo,
  type KeyPolicy,
} from "@fairway/store";
import type { DashEnv } from "./deps.ts";
import { fmtMs, pct } from "./format.ts";
import { PostForm } from "./layout.tsx";
import { type Flash, page } from "./tenant-shell.tsx";

export const keysPage = new Hono<DashEnv>();

/** Keys shown, busiest first. */
const TOP_KEYS = 25;

const DONE: Record<string, string> = {
  saved: "Key policy saved. The next claim uses it.",
  reset: "Key returned to the tenant's defaults.",
  defaults: "Key defaults saved. They apply to every key without an override.",
};

type PolicyForm = { maxInFlight: string; ratePerSecond: string; weight: string };
type KeyForm = PolicyForm & { key: string };

const text = (v: unknown) => (typeof v === "string" ? v : "");

/** The busiest keys by recent worker time, then keys with an override or work now that are not among
 *  them (a key whose policy was set before it ran is shown, so it can be seen and reset here). */
async function shownKeys(db: Db, tenantId: string): Promise<KeyInfo[]> {
  const [top, listed] = await Promise.all([
    topKeys(db, tenantId, TOP_KEYS),
    listKeys(db, tenantId, { limit: TOP_KEYS }),
  ]);
  const seen = new Set(top.map((k) => k.key));
  return [...top, ...listed.data.filter((k) => !seen.has(k.key))];
}

/** A form field as the API's value: a number as a number, `none` as null (no cap, no rate), anything
 *  else as typed so the API's refusal names it. Empty: `ifEmpty` (left out, or null). */
function fieldValue(raw: string, ifEmpty: undefined | null): unknown {
  const v = raw.trim();
  if (v === "") return ifEmpty;
  if (v.toLowerCase() === "none") return null;
  return /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v) ? Number(v) : v;
}

function apiBody(f: PolicyForm, ifEmpty: undefined | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ["maxInFlight", "ratePerSecond", "weight"] as const) {
    const v = fieldValue(f[k], ifEmpty);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** A refusal from the API's functions (an ApiError): its status, code and message. */
function refusal(err: unknown): { code: string; message: string } | null {
  const e = err as { status?: unknown; code?: unknown; message?: unknown } | null;
  return e && typeof e.status === "number" && e.status >= 400 && e.status < 500 && typeof e.code === "string"
    ? { code: e.code, message: String(e.message) }
    : null;
}

const shown = (v: number | null | undefined) => (v === undefined ? "" : v === null ? "none" : String(v));
const policyForm = (p: Partial<KeyPolicy>): PolicyForm => ({
  maxInFlight: shown(p.maxInFlight),
  ratePerSecond: shown(p.ratePerSecond),
  weight: shown(p.weight),
});

async function render(
  c: Context<DashEnv>,
  opts: {
    keyForm?: KeyForm;
    defaultsForm?: PolicyForm;
    keyError?: string;
    defaultsError?: string;
    flash?: Flash;
    status?: 200 | 400;
  } = {},
) {
  const d = c.var.dash;
  const base = c.var.base;
  const [keys, defaults, tenant] = await Promise.all([
    shownKeys(d.db, c.var.tenantId),
    getKeyDefaults(d.db, c.var.tenantId),
    getTenant(d.db, c.var.tenantId),
  ]);
  // On a quota plan, the form holds the tenant's own key defaults: an empty field takes the plan's
  // (saving the values in force would make every one of them the tenant's own).
  const planId = tenant?.planId ?? null;
  const own = (tenant?.own ?? {}) as Record<string, number | undefined>;
  const defaultsShown =
    planId === null
      ? defaults
      : { maxInFlight: own.keyMaxInFlight, ratePerSecond: own.keyRatePerSecond, weight: own.keyWeight };
  let keyForm = opts.keyForm;
  const edit = c.req.query("edit");
  if (!keyForm && edit && edit.length <= 200) {
    // Prefill only: a key that cannot exist reads as one never seen; saving checks it.
    const info = await getKeyInfo(d.db, c.var.tenantId, edit);
    keyForm = { key: edit, ...policyForm(info.override ?? {}) };
  }
  keyForm ??= { key: "", maxInFlight: "", ratePerSecond: "", weight: "" };
  const defaultsForm = opts.defaultsForm ?? policyForm(defaultsShown);
  const done = c.req.query("done");
  const flash =
    opts.flash !== undefined ? opts.flash : done && DONE[done] ? { kind: "ok" as const, text: DONE[done] } : null;
  const csrf = c.var.csrf;
  return page(
    c,
    "Keys",
    "/keys",
    <>
      <h1>Fairness keys</h1>
      <p class="sub">
        A job's <span class="mono">key</span> (a customer, a user, an integration) shares this account's worker time
        with its other keys by weight, within each key's cap and rate. These are the keys that used the most worker time
        lately, then keys with their own policy or work waiting; refreshed every few seconds.
      </p>
      <h2 id="top-h">Busiest keys</h2>
      <div data-live={`${base}/keys/live`} data-every="3000">
        <KeyTable c={c} keys={keys} />
      </div>
      <h2 id="edit-h">Policy</h2>
      <div class="grid">
        <section class="card" aria-labelledby="key-h">
          <h2 id="key-h">A key's policy</h2>
          {opts.keyError && (
            <p class="flash err" role="alert">
              {opts.keyError}
            </p>
          )}
          <PostForm action={`${base}/keys/policy`} csrf={csrf} label="A key's policy">
            <div class="field">
              <label for="k-key">Key</label>
              <input id="k-key" name="key" class="mono" value={keyForm.key} autocomplete="off" required />
            </div>
            <PolicyFields prefix="k" form={keyForm} empty="the tenant's default" />
            <button type="submit">Save key policy</button>
          </PostForm>
        </section>
        <section class="card" aria-labelledby="defaults-h">
          <h2 id="defaults-h">Key defaults</h2>
          <p class="muted">For every key without its own policy.</p>
          {opts.defaultsError && (
            <p class="flash err" role="alert">
              {opts.defaultsError}
            </p>
          )}
          <PostForm action={`${base}/keys/defaults`} csrf={csrf} label="Key defaults">
            <PolicyFields
              prefix="d"
              form={defaultsForm}
              empty={
                planId === null
                  ? "no cap, no rate, weight 1"
                  : `the plan ${planId}'s value (now: cap ${shown(defaults.maxInFlight) || "none"}, rate ${shown(defaults.ratePerSecond) || "none"}, weight ${defaults.weight})`
              }
            />
            <button type="submit">Save defaults</button>
          </PostForm>
        </section>
      </div>
    </>,
    flash,
    opts.status ?? 200,
  );
}

function PolicyFields(props: { prefix: string; form: PolicyForm; empty: string }) {
  const p = props.prefix;
  const hint = `${p}-hint`;
  return (
    <>
      <div class="field">
        <label for={`${p}-cap`}>Runs at once (maxInFlight)</label>
        <input
          id={`${p}-cap`}
          name="maxInFlight"
          inputmode="numeric"
          value={props.form.maxInFlight}
          aria-describedby={hint}
        />
      </div>
      <div class="field">
        <label for={`${p}-rate`}>Starts per second (ratePerSecond)</label>
        <input
          id={`${p}-rate`}
          name="ratePerSecond"
          inputmode="decimal"
          value={props.form.ratePerSecond}
          aria-describedby={hint}
        />
      </div>
      <div class="field">
        <label for={`${p}-weight`}>Weight</label>
        <input id={`${p}-weight`} name="weight" inputmode="decimal" value={props.form.weight} aria-describedby={hint} />
      </div>
      <p class="hint" id={hint}>
        Runs 1–100000, starts 0.01–100000 per second, weight 0.01–1000; <span class="mono">none</span>: no cap or no
        rate. Empty: {props.empty}.
      </p>
    </>
  );
}

function KeyTable(props: { c: Context<DashEnv>; keys: KeyInfo[] }) {
  const base = props.c.var.base;
  const csrf = props.c.var.csrf;
  if (props.keys.length === 0)
    return <p class="card empty">No keys with work yet. Give jobs a key to share this account's capacity by it.</p>;
  return (
    <div class="table-wrap">
      <table class="stack" aria-labelledby="top-h">
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col" class="num">
              Worker time
            </th>
            <th scope="col" class="num">
              Running
            </th>
            <th scope="col" class="num">
              Due
            </th>
            <th scope="col" class="num">
              Oldest lag
            </th>
            <th scope="col">Cap</th>
            <th scope="col">Rate</th>
            <th scope="col" class="num">
              Weight
            </th>
            <th scope="col">Policy</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((k) => (
            <tr>
              <td data-label="Key" class="mono">
                {k.key}
              </td>
              <td data-label="Worker time" class="num">
                {pct(k.workerTimeShare)}
              </td>
              <td data-label="Running" class="num">
                {k.running}
              </td>
              <td data-label="Due" class="num">
                {k.due}
              </td>
              <td data-label="Oldest lag" class="num">
                {fmtMs(k.oldestDueLagMs)}
              </td>
              <td data-label="Cap">{k.policy.maxInFlight ?? "none"}</td>
              <td data-label="Rate">{k.policy.ratePerSecond === null ? "none" : `${k.policy.ratePerSecond}/s`}</td>
              <td data-label="Weight" class="num">
                {k.policy.weight}
              </td>
              <td data-label="Policy">{k.override ? "own" : "defaults"}</td>
              <td data-label="Actions">
                <div class="row-actions">
                  <a class="button secondary" href={`${base}/keys?edit=${encodeURIComponent(k.key)}#key-h`}>
                    Edit
                  </a>
                  {k.override && (
                    <PostForm action={`${base}/keys/reset`} csrf={csrf}>
                      <input type="hidden" name="key" value={k.key} />
                      <button type="submit" class="secondary" aria-label={`Reset ${k.key} to the defaults`}>
                        Reset
                      </button>
                    </PostForm>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

keysPage.get("/keys", (c) => render(c));

keysPage.get("/keys/live", async (c) => {
  const keys = await shownKeys(c.var.dash.db, c.var.tenantId);
  return c.html(<KeyTable c={c} keys={keys} />);
});

keysPage.post("/keys/policy", async (c) => {
  const b = await c.req.parseBody();
  const form: KeyForm = {
    key: text(b.key),
    maxInFlight: text(b.maxInFlight),
    ratePerSecond: text(b.ratePerSecond),
    weight: text(b.weight),
  };
  try {
    await c.var.dash.commands.putKeyPolicy(c.var.tenantId, form.key, apiBody(form, undefined));
  } catch (err) {
    const r = refusal(err);
    if (!r) throw err;
    return render(c, {
      keyForm: form,
      keyError: r.message,
      flash: { kind: "err", text: "Key policy not saved." },
      status: 400,
    });
  }
  c.var.dash.log.info("key override set", { tenantId: c.var.tenantId, via: "dashboard" });
  return c.redirect(`${c.var.base}/keys?done=saved&edit=${encodeURIComponent(form.key)}`, 303);
});

keysPage.post("/keys/reset", async (c) => {
  const key = text((await c.req.parseBody()).key);
  try {
    await c.var.dash.commands.deleteKeyPolicy(c.var.tenantId, key);
  } catch (err) {
    const r = refusal(err);
    if (!r) throw err;
    return render(c, { keyError: r.message, flash: { kind: "err", text: "Key not reset." }, status: 400 });
  }
  return c.redirect(`${c.var.base}/keys?done=reset`, 303);
});

keysPage.post("/keys/defaults", async (c) => {
  const b = await c.req.parseBody();
  const form: PolicyForm = {
    maxInFlight: text(b.maxInFlight),
    ratePerSecond: text(b.ratePerSecond),
    weight: text(b.weight),
  };
  try {
    await c.var.dash.commands.patchKeyDefaults(c.var.tenantId, apiBody(form, null));
  } catch (err) {
    const r = refusal(err);
    if (!r) throw err;
    return render(c, {
      defaultsForm: form,
      defaultsError: r.message,
      flash: { kind: "err", text: "Key defaults not saved." },
      status: 400,
    });
  }
  c.var.dash.log.info("key defaults updated", { tenantId: c.var.tenantId, via: "dashboard" });
  return c.redirect(`${c.var.base}/keys?done=defaults`, 303);
});
