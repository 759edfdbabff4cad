// The job form's text as the API's body and merge patch: shapes only, the rules are the API's.
import { describe, expect, it } from "vitest";
import { bodyOfValues, EMPTY_FORM, fieldOf, FormRefusal, KEPT, patchOf, valuesOfForm } from "../src/job-form-body.ts";

const form = (over: Partial<typeof EMPTY_FORM>) => ({ ...EMPTY_FORM, name: "n", cron: "0 9 * * *", ...over });

describe("job form body", () => {
  it("makes the API's body: numbers from digits, JSON payload, plain or JSON target body, notify", () => {
    expect(
      bodyOfValues(
        form({
          url: "https://example.com/h",
          headers: "x-team: ops\n\nauthorization: Bearer ${secrets.K}",
          body: "period=daily",
          payload: '{"n": 1}',
          maxAttempts: "3",
          timeoutMs: "soon",
          notify: "channels",
          channels: "ch_1, ch_2",
        }),
      ),
    ).toEqual({
      name: "n",
      type: "webhook",
      schedule: { cron: "0 9 * * *", timezone: "UTC" },
      target: {
        url: "https://example.com/h",
        method: "POST",
        headers: { "x-team": "ops", authorization: "Bearer ${secrets.K}" },
        body: "period=daily",
      },
      payload: { n: 1 },
      retry: { maxAttempts: 3 },
      // Not digits: passed as typed, for the API to refuse by name.
      timeoutMs: "soon",
      notify: { channels: ["ch_1", "ch_2"] },
    });
    expect(bodyOfValues(form({ kind: "once", at: "" })).schedule).toEqual({ delayMs: 0 });
    expect(bodyOfValues(form({ url: "https://e.com", body: '{"a": [1]}' })).target).toMatchObject({ body: { a: [1] } });
  });

  it("keeps a hidden header's stored value, and refuses what is not the shape it names", () => {
    const kept = { authorization: "Bearer sk_live" };
    const body = bodyOfValues(form({ url: "https://e.com", headers: `Authorization: ${KEPT}` }), kept);
    expect(body.target).toMatchObject({ headers: { Authorization: "Bearer sk_live" } });
    /** The refusal's field and message, or null when the form was accepted. */
    const refused = (v: Partial<typeof EMPTY_FORM>): [string | null, string] | null => {
      try {
        bodyOfValues(form(v));
      } catch (e) {
        if (e instanceof FormRefusal) return [e.field, e.message];
        throw e;
      }
      return null;
    };
    expect(refused({ url: "https://e.com", headers: `x: ${KEPT}` })?.[0]).toBe("headers");
    expect(refused({ url: "https://e.com", headers: "no colon" })?.[0]).toBe("headers");
    expect(refused({ payload: "{nope" })).toEqual([
      "payload",
      'payload: must be JSON, e.g. {"n": 1} (or leave it empty)',
    ]);
    expect(refused({ body: "text" })?.[0]).toBe("url");
  });

  it("patches only what changed, and clears what the form emptied", () => {
    const before = bodyOfValues(form({ url: "https://e.com/a", key: "k", payload: "[1]" }));
    const after = bodyOfValues(form({ url: "https://e.com/b", key: "", payload: "[1]" }));
    expect(patchOf(before, after)).toEqual({
      target: { url: "https://e.com/b", method: "POST" },
      key: null,
    });
    expect(patchOf(before, before)).toEqual({});
  });

  it("sends spread, the policies that differ from the defaults, and a one-time job's debounce", () => {
    const cron = bodyOfValues(
      form({ spread: "PT10M", overlap: "skip", misfire: "fire_all", onBusy: "cancel_running", key: "acct" }),
    );
    expect(cron).toMatchObject({
      schedule: { cron: "0 9 * * *", timezone: "UTC", spread: "PT10M" },
      overlap: "skip",
      misfire: "fire_all",
      onBusy: "cancel_running",
    });
    // Defaults are left out of a create.
    expect(bodyOfValues(form({}))).not.toHaveProperty("overlap");
    expect(bodyOfValues(form({}))).not.toHaveProperty("onBusy");
    const once = bodyOfValues(
      form({ kind: "once", debounceKey: "account-42", debouncePeriodMs: "30000", debounceMaxWaitMs: "300000" }),
    );
    expect(once.debounce).toEqual({ key: "account-42", periodMs: 30000, maxWaitMs: 300000 });
    // A debounce is a one-time job's: on a cron form it is refused at its field.
    expect(() => bodyOfValues(form({ debounceKey: "x", debouncePeriodMs: "1000" }))).toThrow(
      /only goes with a one-time job/,
    );
    expect(() => bodyOfValues(form({ kind: "once", debouncePeriodMs: "1000" }))).toThrow(/debounce.key/);
  });

  it("patches a policy back to its default and a cleared spread to null", () => {
    const before = bodyOfValues(form({ spread: "PT10M", overlap: "skip", onBusy: "skip", key: "k" }));
    const after = bodyOfValues(form({ key: "k" }));
    expect(patchOf(before, after)).toEqual({
      schedule: { cron: "0 9 * * *", timezone: "UTC", spread: null },
      overlap: "allow",
      onBusy: "queue",
    });
  });

  it("finds the field an API message is about", () => {
    expect(fieldOf("schedule.cron: bad")).toBe("cron");
    expect(fieldOf("schedule.timezone: bad")).toBe("timezone");
    expect(fieldOf("schedule: give exactly one of cron, at or delayMs")).toBe("cron");
    expect(fieldOf("target.url: not allowed")).toBe("url");
    expect(fieldOf("target names secret X, which …")).toBe("headers");
    expect(fieldOf("retry.maxAttempts: must be …")).toBe("maxAttempts");
    expect(fieldOf("notify.channels: ch_x is not …")).toBe("channels");
    expect(fieldOf("payload is 9 bytes; this tenant's limit is 1")).toBe("payload");
    expect(fieldOf("this tenant may have at most 3 jobs")).toBe(null);
    expect(fieldOf("schedule.spread: must be an ISO 8601 duration")).toBe("spread");
    expect(fieldOf("debounce.periodMs: must be …")).toBe("debouncePeriodMs");
    expect(fieldOf("debounce: required")).toBe("debounceKey");
    expect(fieldOf('onBusy: "skip" decides what …')).toBe("onBusy");
  });

  it("reads a posted form, ignoring what it does not know", () => {
    const v = valuesOfForm({ name: "x", kind: "weird", notify: "none", extra: "y", csrf: "t" });
    expect(v).toMatchObject({ name: "x", kind: "cron", notify: "none" });
    expect(v).not.toHaveProperty("extra");
  });
});
