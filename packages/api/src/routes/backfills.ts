// Backfill routes (docs/flow-control.md): start one for a cron job, list a job's, read one, cancel one.
import { getJob, listBackfills } from "@fairway/store";
import { readBackfill, startBackfill, stopBackfill } from "../commands/backfills.ts";
import { notFound } from "../errors.ts";
import { route } from "../route.ts";
import { backfillBody, pageQuery } from "../schemas.ts";
import { backfillJson, page } from "../serialize.ts";
import { jsonBody, queryOf } from "../validate.ts";

export const backfillRoutes = [
  route({
    method: "post",
    path: "/v1/jobs/:id/backfill",
    summary: "Backfill a cron job: its fires in [from, to) as triggers behind its tenant's live work",
    params: { id: "The cron job's id" },
    body: {
      name: "CreateBackfill",
      example: { from: "2026-01-01T00:00:00Z", to: "2026-01-02T00:00:00Z", overlap: "skip" },
    },
    ok: { status: 201, description: "The backfill, its triggers counted", json: "Backfill" },
    errors: [400, 404, 409],
    handler: async (c) => {
      const body = await jsonBody(c, backfillBody);
      const b = await startBackfill(c.var, c.var.tenant.id, c.req.param("id"), body);
      return c.json(backfillJson(b), 201);
    },
  }),
  route({
    method: "get",
    path: "/v1/jobs/:id/backfills",
    summary: "A job's backfills, newest first",
    params: { id: "The job id" },
    query: pageQuery,
    ok: { status: 200, description: "A page of backfills", json: "BackfillPage" },
    errors: [400, 404],
    handler: async (c) => {
      const { deps, tenant } = c.var;
      const q = queryOf(c, pageQuery);
      const job = await getJob(deps.db, tenant.id, c.req.param("id"));
      if (!job) throw notFound("job");
      const rows = await listBackfills(deps.db, tenant.id, job.id, q.cursor ?? null, q.limit);
      return c.json(page(rows, q.limit, backfillJson));
    },
  }),
  route({
    method: "get",
    path: "/v1/backfills/:id",
    summary: "A backfill, its triggers counted by status",
    params: { id: "The backfill id" },
    ok: { status: 200, description: "The backfill", json: "Backfill" },
    errors: [404],
    handler: async (c) => {
      return c.json(backfillJson(await readBackfill(c.var, c.var.tenant.id, c.req.param("id"))));
    },
  }),
  /** DELETE cancels what is not yet claimed; again, it answers the same backfill with cancelled: 0. */
  route({
    method: "delete",
    path: "/v1/backfills/:id",
    summary: "Cancel a backfill's triggers not yet claimed (idempotent; running ones finish)",
    params: { id: "The backfill id" },
    ok: { status: 200, description: "The backfill, with how many triggers this request cancelled", json: "Backfill" },
    errors: [404],
    handler: async (c) => {
      const b = await stopBackfill(c.var, c.var.tenant.id, c.req.param("id"));
      return c.json({ ...backfillJson(b), cancelled: b.cancelledNow });
    },
  }),
];
