// The dashboard's only static files, served by the app itself (no build step, no CDN). The script
// refreshes [data-live] regions by fetching their fragment URL; the pages work without it.
import { TIME_FORMAT } from "./format.ts";

export const STYLE_CSS = `
:root{--bg:#f6f7f9;--fg:#15171a;--muted:#545b66;--line:#d9dde3;--card:#fff;--accent:#1f5fbf;--accent-fg:#fff;
--ok:#1d7a3e;--bad:#b3261e;--warn:#8a5a00;--chip:#eef1f5;--focus:#ffbf47}
*{box-sizing:border-box}
html{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Ubuntu,sans-serif;color:var(--fg);background:var(--bg)}
body{margin:0}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:6px 10px;z-index:9}
header.top{background:#14213d;color:#fff;padding:0 16px;display:flex;flex-wrap:wrap;align-items:center;gap:4px 20px}
header.top .brand{font-weight:700;padding:12px 0;letter-spacing:.02em}
header.top nav{display:flex;flex-wrap:wrap;gap:2px}
header.top nav a{color:#dfe6f3;text-decoration:none;padding:12px 10px;border-bottom:3px solid transparent}
header.top nav a[aria-current=page]{color:#fff;border-bottom-color:var(--focus)}
header.top .who{margin-left:auto;display:flex;align-items:center;gap:10px;font-size:.9rem;color:#dfe6f3}
header.top .who button{background:transparent;color:#fff;border:1px solid #8ea0c4;padding:4px 10px}
main{max-width:1200px;margin:0 auto;padding:20px 16px 48px}
h1{font-size:1.5rem;margin:0 0 4px}h2{font-size:1.15rem;margin:28px 0 10px}
.sub{color:var(--muted);margin:0 0 16px}
.card>h2:first-child,.card>h3:first-child{margin-top:0}
h3{font-size:1rem;margin:18px 0 8px}h4{font-size:.9rem;margin:12px 0 4px}
.card .field input,.card .field select{width:100%;max-width:28rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px;margin:0 0 16px}
.grid{display:grid;gap:16px;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));align-items:start}
.table-wrap{overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:8px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{text-align:left;padding:8px 12px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);background:#fafbfc;white-space:nowrap}
tr:last-child td{border-bottom:0}
td.num,th.num{text-align:right}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
.chip{display:inline-block;padding:1px 8px;border-radius:999px;background:var(--chip);font-size:.8rem;font-weight:600;white-space:nowrap}
.s-active,.s-succeeded,.s-success,.s-live,.s-sent{background:#e3f3e8;color:var(--ok)}
.s-paused,.s-pending,.s-running{background:#fdf1d8;color:var(--warn)}
.s-dead,.s-dead_lettered,.s-suspended,.s-failed,.s-http_error,.s-network_error,.s-timeout,.s-lost,.s-no_worker,.s-unknown{background:#fbe4e2;color:var(--bad)}
.s-cancelled,.s-completed,.s-skipped,.s-stopped{background:var(--chip);color:var(--muted)}
form.inline{display:inline}
form.filters{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-end;margin:0 0 12px}
form.filters .check{display:flex;gap:6px;align-items:center;min-height:38px}
form.filters .check input{width:auto;min-height:0;margin:0}
form.filters .check label{margin:0}
.streak{color:var(--bad);font-size:.8rem;font-weight:600}
label{display:block;font-size:.85rem;font-weight:600;margin:0 0 4px}
.field{margin:0 0 12px}
.field .hint{font-size:.8rem;color:var(--muted);margin:2px 0 0}
.table-wrap+section.card{margin-top:16px}
.row-actions{display:flex;gap:6px}.row-actions button{white-space:nowrap}
fieldset.checks{border:1px solid var(--line);border-radius:6px;padding:8px 12px;margin:0 0 12px;max-width:28rem}
fieldset.checks legend{font-size:.85rem;font-weight:600;padding:0 4px}
fieldset.checks label{display:flex;gap:8px;align-items:center;font-weight:400;margin:4px 0}
fieldset.checks input{width:auto;min-height:0;margin:0}
fieldset.checks .hint{font-size:.8rem;color:var(--muted);margin:4px 0 0}
input,select{font:inherit;padding:7px 9px;border:1px solid #8a94a3;border-radius:6px;background:#fff;color:var(--fg);min-height:38px;max-width:100%}
button,.button{font:inherit;font-weight:600;padding:7px 14px;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:var(--accent-fg);cursor:pointer;min-height:38px;text-decoration:none;display:inline-block}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}
button.danger{background:var(--bad);border-color:var(--bad)}
.actions{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0 16px}
.flash{padding:10px 14px;border-radius:6px;margin:0 0 16px;border:1px solid}
.flash.ok{background:#e3f3e8;border-color:#9fd3b0;color:#0f4d26}
.flash.err{background:#fbe4e2;border-color:#e6a9a3;color:#7a1912}
.pager{display:flex;gap:10px;margin:10px 0}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:6px 16px;margin:0}
dl.kv dt{color:var(--muted);font-size:.85rem}dl.kv dd{margin:0;overflow-wrap:anywhere}
pre{background:#0f1720;color:#e6edf3;padding:12px;border-radius:6px;overflow:auto;max-height:320px;font-size:.82rem;margin:4px 0 0;white-space:pre-wrap;overflow-wrap:anywhere}
ol.fires{margin:0;padding-left:20px}
.chart svg{width:100%;height:auto;display:block}
.chart figcaption{font-size:.85rem;color:var(--muted);margin-top:6px}
.legend{display:flex;gap:14px;font-size:.8rem;color:var(--muted);margin:4px 0 0}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}.legend i.a,.legend i.c0{background:#1f5fbf}.legend i.c2{background:#6b21a8}.legend i.b,.legend i.c1{background:#c2410c}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.empty{color:var(--muted);padding:16px}
.muted{color:var(--muted);font-size:.85rem;margin:4px 0}
ul.plain{list-style:none;margin:0;padding:0}
.exchange{display:grid;gap:16px;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));margin-top:8px}
.exchange h4{margin-top:8px}.exchange h5{font-size:.8rem;margin:8px 0 2px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.exchange .line{margin:0 0 6px;overflow-wrap:anywhere}
dl.kv.headers{grid-template-columns:minmax(8rem,max-content) 1fr;gap:2px 12px;font-size:.8rem;margin:0 0 6px}
dl.kv.headers dt{font-size:.8rem}
.login{max-width:420px;margin:10vh auto}
textarea{font:inherit;padding:7px 9px;border:1px solid #8a94a3;border-radius:6px;background:#fff;color:var(--fg);width:100%;max-width:40rem}
textarea:focus-visible,a.button:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
fieldset.card>legend{font-weight:700;padding:0 6px}
.card .field textarea{width:100%}
input:disabled{background:var(--chip);color:var(--muted)}
.field-error{color:var(--bad);font-weight:600;font-size:.85rem;margin:4px 0 0}
[aria-invalid=true]{border-color:var(--bad);border-width:2px}
.preview{background:#f3f6fb;border:1px solid var(--line);border-radius:6px;padding:8px 12px;margin:0 0 12px;max-width:40rem}
.preview p{margin:0 0 4px}
.grid.charts{grid-template-columns:repeat(auto-fit,minmax(460px,1fr))}
@media (max-width:520px){.grid.charts{grid-template-columns:1fr}}
.chart h3{margin:0 0 6px}
.grid.tight{grid-template-columns:repeat(auto-fit,minmax(200px,1fr));gap:0 16px}
.range{display:flex;gap:6px;margin:0 0 16px}.range a{padding:6px 12px;border:1px solid var(--accent);border-radius:6px;text-decoration:none}
.range a[aria-current=page]{background:var(--accent);color:#fff}
@media (max-width:640px){
  main{padding:14px 10px 40px}
  header.top{padding:0 10px}
  header.top .who{margin-left:0;padding-bottom:8px}
  table.stack thead{display:none}
  table.stack tr{display:block;border-bottom:1px solid var(--line);padding:6px 0}
  table.stack td{display:flex;flex-wrap:wrap;justify-content:space-between;gap:2px 12px;border:0;padding:4px 12px;text-align:right;min-width:0;overflow-wrap:anywhere}
  table.stack td::before{content:attr(data-label);flex:0 0 auto;font-weight:600;color:var(--muted);text-align:left}
  table.stack td .mono,table.stack td.mono{word-break:break-all}
  table.stack td.mono::before{font:600 1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Ubuntu,sans-serif}
  table.stack td br{display:none}
  table.stack td ul.plain{text-align:right}
  dl.kv.headers{grid-template-columns:1fr}
  dl.kv.headers dd{margin:0 0 4px}
  table.stack td.num{text-align:right}
  input,select{width:100%}
  form.filters>div{flex:1 1 100%}
}
`;

/** The favicon: a flag on a green, as an SVG (no 404 for every page's icon request). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d7a3e"/><path d="M11 6v21" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/><path d="M12 7l11 4-11 4z" fill="#ffbf47"/><ellipse cx="16" cy="26" rx="8" ry="2.2" fill="#fff" opacity=".55"/></svg>`;

export const LIVE_JS = `
(function(){
  // Instants in the viewer's zone (time.tsx writes them in UTC); the exact instant stays in title.
  var fmt=new Intl.DateTimeFormat("en-GB",${JSON.stringify(TIME_FORMAT)});
  function localize(root){
    root.querySelectorAll("time[data-local]").forEach(function(t){
      var d=new Date(t.getAttribute("datetime"));
      if(!isNaN(d.getTime()))t.textContent=fmt.format(d);
    });
  }
  window.fairwayLocalize=localize;
  localize(document);
  var regions=document.querySelectorAll("[data-live]");
  if(!regions.length)return;
  function refresh(el){
    if(document.hidden)return;
    fetch(el.getAttribute("data-live"),{credentials:"same-origin",headers:{"x-fairway-fragment":"1"}})
      .then(function(r){return r.ok?r.text():null})
      .then(function(html){if(html!==null&&!el.contains(document.activeElement)){el.innerHTML=html;localize(el);}})
      .catch(function(){});
  }
  regions.forEach(function(el){
    var every=Math.max(1000,Number(el.getAttribute("data-every"))||3000);
    setInterval(function(){refresh(el)},every);
  });
})();
`;

/** The job form's schedule preview: asks /jobs/preview (the scheduler's own cron code) as you type. */
export const JOB_FORM_JS = `
(function(){
  var box=document.getElementById("schedule-preview");
  var cron=document.getElementById("cron"),tz=document.getElementById("timezone");
  if(!box||!cron||!tz)return;
  var timer=null,seq=0;
  function el(tag,text){var e=document.createElement(tag);if(text!=null)e.textContent=text;return e;}
  function show(r){
    box.textContent="";
    if(r.error){var m=el("p",r.error);m.className="muted";box.appendChild(m);return;}
    var p=el("p"),s=el("strong",r.words);p.appendChild(s);box.appendChild(p);
    var ol=el("ol");ol.className="fires";
    r.fires.forEach(function(f){var li=el("li"),t=el("time",f);t.setAttribute("datetime",f);t.setAttribute("title",f);
      t.setAttribute("data-local","");li.appendChild(t);ol.appendChild(li);});
    box.appendChild(ol);
    if(window.fairwayLocalize)window.fairwayLocalize(box);
  }
  function ask(){
    var n=++seq;
    var q="?cron="+encodeURIComponent(cron.value)+"&timezone="+encodeURIComponent(tz.value);
    fetch(box.getAttribute("data-preview")+q,{credentials:"same-origin",headers:{"x-fairway-fragment":"1"}})
      .then(function(r){return r.ok?r.json():null})
      .then(function(r){if(r&&n===seq)show(r);})
      .catch(function(){});
  }
  function later(){clearTimeout(timer);timer=setTimeout(ask,200);}
  cron.addEventListener("input",later);tz.addEventListener("input",later);
})();
`;
