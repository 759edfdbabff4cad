/** @jsxImportSource hono/jsx */
// A tenant's secrets: names and times only. A value goes in through the API and never comes out of
// Fairway (only the executor opens it, at delivery), so no page reads it, sealed or not.
import { Hono } from "hono";
import { secretNamesPage } from "@fairway/store";
import type { DashEnv } from "./deps.ts";
import { When } from "./time.tsx";
import { PAGE_SIZE } from "./forms.ts";
import { Pager } from "./layout.tsx";
import { page } from "./tenant-shell.tsx";

export const secretsPage = new Hono<DashEnv>();

// biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder syntax itself, shown as text
const PLACEHOLDER = "${secrets.NAME}";

secretsPage.get("/secrets", async (c) => {
  const after = c.req.query("after")?.slice(0, 100) ?? null;
  const base = c.var.base;
  const rows = await secretNamesPage(c.var.dash.db, c.var.tenantId, { after, limit: PAGE_SIZE + 1 });
  const list = rows.slice(0, PAGE_SIZE);
  const next =
    rows.length > PAGE_SIZE ? `${base}/secrets?after=${encodeURIComponent(list[list.length - 1].name)}` : null;
  return page(
    c,
    "Secrets",
    "/secrets",
    <>
      <h1>Secrets</h1>
      <p class="sub">
        Names only: a value is set with <span class="mono">PUT /v1/secrets/:name</span> and never shown again. A job
        uses one as <span class="mono">{PLACEHOLDER}</span> in its URL, header values or body; attempts record the
        placeholder, never the value.
      </p>
      {list.length === 0 ? (
        <p class="card empty">No secrets.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <caption class="sr">Secrets</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Use as</th>
                <th scope="col">Created</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {list.map((s) => (
                <tr>
                  <td data-label="Name" class="mono">
                    {s.name}
                  </td>
                  <td data-label="Use as" class="mono">
                    {`\${secrets.${s.name}}`}
                  </td>
                  <td data-label="Created">
                    <When d={s.createdAt} />
                  </td>
                  <td data-label="Updated">
                    <When d={s.updatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager next={next} first={after ? `${base}/secrets` : null} label="Secret pages" />
    </>,
  );
});
