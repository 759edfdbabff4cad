// GET /docs: an interactive reference for /openapi.json in one self-contained page (no CDN, no
// bundled UI library, so it works offline and in the Worker): every operation with its parameters,
// request and response schemas, and a form that sends the request with your token.
export const docsPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Fairway API reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fafafa}
header{padding:16px 24px;background:#14213d;color:#fff}header h1{margin:0;font-size:20px}
code{font:0.92em monospace;background:rgba(127,127,127,.18);padding:0 3px;border-radius:3px}
header label{font-size:13px;margin-left:auto}header input{width:360px;font:13px monospace;padding:4px}
.bar{display:flex;gap:16px;align-items:center;flex-wrap:wrap}
main{max-width:1100px;margin:0 auto;padding:16px 24px}h2{margin-top:32px;border-bottom:1px solid #ddd}
details.op{background:#fff;border:1px solid #ddd;border-radius:6px;margin:8px 0}
details.op>summary{cursor:pointer;padding:8px 12px;display:flex;gap:12px;align-items:center}
.m{font:bold 12px monospace;padding:2px 8px;border-radius:4px;color:#fff;min-width:56px;text-align:center}
.get{background:#2b7a0b}.post{background:#0b5ea8}.patch{background:#a86b0b}.put{background:#6b3fa0}.delete{background:#b3261e}
.path{font-family:monospace}.body{padding:8px 16px 16px}pre{background:#f3f4f6;padding:8px;overflow:auto;max-height:320px;font-size:12px}
textarea{width:100%;min-height:120px;font:12px monospace}input.p{font:13px monospace;padding:3px;width:260px}
button{padding:6px 14px;margin-top:8px;cursor:pointer}.status{font-weight:bold}
</style></head><body>
<header><div class="bar"><h1>Fairway API</h1><span id="desc"></span>
<label>Bearer token <input id="token" placeholder="fw_… or the admin token" autocomplete="off"></label></div></header>
<main id="main">Loading /openapi.json…</main>
<script>
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
// The document's texts are markdown with inline code only: escaped first, then \`x\` becomes <code>x</code>.
const md = (s) => esc(s).replace(/\x60([^\x60]+)\x60/g, "<code>$1</code>");
const tokenInput = document.getElementById("token");
tokenInput.value = sessionStorage.getItem("fairway-token") || "";
tokenInput.oninput = () => sessionStorage.setItem("fairway-token", tokenInput.value);
fetch("openapi.json").then((r) => r.json()).then((doc) => {
  document.getElementById("desc").innerHTML = md(doc.info.description);
  const byTag = {};
  for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops)) {
    (byTag[(op.tags || ["Other"])[0]] ||= []).push({ path, method, op });
  }
  const main = document.getElementById("main");
  main.innerHTML = "";
  for (const [tag, ops] of Object.entries(byTag)) {
    main.insertAdjacentHTML("beforeend", "<h2>" + esc(tag) + "</h2>");
    for (const o of ops) main.appendChild(operation(doc, o));
  }
  main.insertAdjacentHTML("beforeend", "<h2>Schemas</h2>" + Object.entries(doc.components.schemas)
    .map(([n, s]) => "<details class=op><summary><b>" + esc(n) + "</b></summary><div class=body><pre>" + esc(JSON.stringify(s, null, 2)) + "</pre></div></details>").join(""));
});
function operation(doc, { path, method, op }) {
  const el = document.createElement("details");
  el.className = "op";
  const params = op.parameters || [];
  const example = op.requestBody ? JSON.stringify(exampleOf(op.requestBody.content["application/json"].schema), null, 2) : null;
  el.innerHTML = "<summary><span class='m " + method + "'>" + method.toUpperCase() + "</span><span class=path>" + esc(path) + "</span><span>" + md(op.summary || "") + "</span></summary><div class=body>"
    + params.map((p) => "<div><label>" + esc(p.name) + " <small>(" + p.in + (p.required ? ", required" : "") + ")</small> <input class=p data-in='" + p.in + "' data-name='" + esc(p.name) + "'></label></div>").join("")
    + (example !== null ? "<p>Request body</p><textarea>" + esc(example) + "</textarea><details><summary>Request schema</summary><pre>" + esc(JSON.stringify(op.requestBody.content["application/json"].schema, null, 2)) + "</pre></details>" : "")
    + "<p>Responses</p>" + Object.entries(op.responses).map(([code, r]) => "<details><summary>" + esc(code) + " — " + esc(r.description) + "</summary><pre>" + esc(JSON.stringify(resolve(doc, r.content && Object.values(r.content)[0].schema), null, 2)) + "</pre></details>").join("")
    + "<button>Send</button><div class=out></div></div>";
  el.querySelector("button").onclick = async () => {
    let url = path; const query = new URLSearchParams(); const headers = {};
    for (const i of el.querySelectorAll("input.p")) {
      if (!i.value) continue;
      if (i.dataset.in === "path") url = url.replace("{" + i.dataset.name + "}", encodeURIComponent(i.value));
      else if (i.dataset.in === "query") query.set(i.dataset.name, i.value);
      else headers[i.dataset.name] = i.value;
    }
    if (tokenInput.value) headers.authorization = "Bearer " + tokenInput.value;
    const ta = el.querySelector("textarea");
    if (ta) headers["content-type"] = "application/json";
    const base = location.pathname.replace(/\\/docs\\/?$/, "");
    const out = el.querySelector(".out");
    try {
      const res = await fetch(base + url + (query.size ? "?" + query : ""), { method: method.toUpperCase(), headers, body: ta ? ta.value : undefined });
      const text = await res.text();
      let shown = text; try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch {}
      out.innerHTML = "<p class=status>" + res.status + " " + esc(res.statusText) + "</p><pre>" + esc(shown) + "</pre>";
    } catch (e) { out.innerHTML = "<pre>" + esc(e) + "</pre>"; }
  };
  return el;
}
function resolve(doc, s) {
  if (s && s.$ref) return doc.components.schemas[s.$ref.split("/").pop()];
  return s || null;
}
function exampleOf(s) {
  if (!s) return null;
  if (s.default !== undefined) return s.default;
  if (s.anyOf || s.oneOf) return exampleOf((s.anyOf || s.oneOf)[0]);
  if (s.type === "object") {
    const o = {};
    for (const k of s.required || []) o[k] = exampleOf(s.properties[k]);
    return o;
  }
  if (s.type === "array") return [];
  if (s.type === "integer" || s.type === "number") return s.minimum ?? 0;
  if (s.type === "boolean") return false;
  if (s.format === "date-time") return new Date(Date.now() + 60000).toISOString();
  if (s.type === "string") return "";
  return null;
}
</script></body></html>`;
