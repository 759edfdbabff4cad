/** @jsxImportSource hono/jsx */
// The overview's Cluster section, on a Citus cluster's distributed layout only (docs/scaling.md,
// "Operations"): each worker node, whether the coordinator reaches it, and the shard groups, tenants
// and work it holds. A node down stalls its tenants alone; this is where an operator sees which.
import { layoutOf, type ClusterNode, type Db } from "@fairway/store";

/** The worker nodes, or null on one PostgreSQL (nothing is queried there: the layout is cached). */
export async function clusterOf(db: Db): Promise<ClusterNode[] | null> {
  return (await layoutOf(db)).nodes(db);
}

const count = (v: number | null) => (v === null ? "—" : v.toLocaleString("en"));

export function ClusterSection(props: { nodes: ClusterNode[] | null }) {
  if (props.nodes === null) return null;
  return (
    <section aria-labelledby="cluster-heading">
      <h2 id="cluster-heading">Cluster</h2>
      <p class="sub">
        Worker nodes of the Citus cluster. A tenant's rows live on one node: a node that is down stalls its tenants
        only. Figures of a node that does not answer show as —.
      </p>
      <div class="table-wrap">
        <table class="stack">
          <caption class="sr">Worker nodes</caption>
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">State</th>
              <th scope="col" class="num">
                Shard groups
              </th>
              <th scope="col" class="num">
                Tenants
              </th>
              <th scope="col" class="num">
                Queued
              </th>
              <th scope="col" class="num">
                Running
              </th>
            </tr>
          </thead>
          <tbody>
            {props.nodes.map((n) => (
              <tr>
                <td data-label="Node" class="mono">
                  {n.node}
                </td>
                <td data-label="State">
                  <span class={`chip s-${n.up ? "live" : "lost"}`}>{n.up ? "up" : "down"}</span>
                </td>
                <td data-label="Shard groups" class="num">
                  {count(n.shards)}
                </td>
                <td data-label="Tenants" class="num">
                  {count(n.tenants)}
                </td>
                <td data-label="Queued" class="num">
                  {count(n.queued)}
                </td>
                <td data-label="Running" class="num">
                  {count(n.running)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
