// POST /v1/jobs/batch: many creates in one request, each with its own result.
import { z } from "zod";
import { createJobBatch } from "../commands/job-batch.ts";
import { route } from "../route.ts";
import { createJobBatchBody } from "../schemas.ts";
import { traceContextOf } from "../trace-context.ts";
import { jsonBody } from "../validate.ts";

export const jobBatchRoutes = [
  route({
    method: "post",
    path: "/v1/jobs/batch",
    summary:
      "Create up to 1000 jobs: each item a create body with an optional idempotencyKey, its own result in input order; the valid ones written in one transaction",
    body: {
      name: "CreateJobBatch",
      example: {
        jobs: [
          {
            name: "reminder-1",
            schedule: { delayMs: 60_000 },
            target: { url: "https://example.com/hook" },
            idempotencyKey: "r-1",
          },
        ],
      },
    },
    ok: { status: 200, description: "One result per item: 201 or 200 with the job, or an error", json: "JobBatch" },
    headers: {
      traceparent: z.string().max(55).describe("W3C trace context, kept by every job of the batch (as POST /v1/jobs)"),
      tracestate: z.string().max(512).describe("W3C tracestate, kept and forwarded with traceparent"),
    },
    errors: [400],
    handler: async (c) => {
      const body = await jsonBody(c, createJobBatchBody);
      return c.json(
        await createJobBatch(
          c.var,
          c.var.tenant,
          body.jobs,
          traceContextOf(c.req.header("traceparent"), c.req.header("tracestate")),
        ),
      );
    },
  }),
];
