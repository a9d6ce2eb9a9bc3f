// The workshop page: plain JavaScript over the server's JSON API and its
// event stream. No framework, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
let current = null;      // selected workspace id
let source = null;       // EventSource of the selected workspace
let handoff = null;      // latest handoff seen
let currentSession = ""; // the workspace's current session id
let workspace = null;    // the selected workspace's JSON, as last read

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (res.status === 204) return {};
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(`${data.code || res.status}: ${data.error || res.statusText}`);
  return data;
}

function notice(msg) { $("notice").textContent = msg; }

// num writes a token count; pct a fraction as a percentage.
const num = (v) => v.toLocaleString("en-US");
const pct = (f) => `${+(100 * f).toFixed(1)}%`;

// What a transfer's briefing carries besides the record (baton.Share).
const shareText = { conversation: "the conversation and the report", report: "the report only", none: "neither" };

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

async function loadEngines() {
  const d = await api("GET", "/api/engines");
  const sel = $("target-engine");
  sel.replaceChildren(...d.engines.map((n) => el("option", { value: n }, n)));
  $("demo-models").replaceChildren(...d.demoModels.map((m) => el("option", { value: m })));
}

async function loadWorkspaces() {
  const d = await api("GET", "/api/workspaces");
  $("ws-list").replaceChildren(...d.workspaces.map((w) =>
    el("li", {}, el("button", { type: "button", "data-ws": w.id, "aria-current": String(w.id === current), onclick: () => select(w.id) }, `${w.name} (${w.model})`))));
}

async function select(id) {
  // The last workspace's stream stops first: its events would otherwise
  // draw that workspace's transfer over this one while it loads.
  if (source) source.close();
  source = null;
  current = id;
  handoff = null;
  workspace = null;
  $("workspace").hidden = false;
  $("event-log").replaceChildren();
  await loadWorkspaces();
  await refresh();
  const cur = await api("GET", `/api/workspaces/${id}/session-handoffs/current`);
  const all = await api("GET", `/api/workspaces/${id}/session-handoffs`);
  const last = cur.handoff || all.handoffs[all.handoffs.length - 1] || null;
  showHandoff(last);
  follow(id);
}

// modelText names the model a session really ran, when its engine said,
// with the configured one beside it when they differ, and the engine's
// version.
function modelText(x) {
  let t = x.model || "—";
  if (x.actualModel && x.actualModel !== x.model) t = `${x.actualModel} (configured ${x.model || "—"})`;
  if (x.engineVersion) t += ` · ${x.engine} ${x.engineVersion}`;
  return t;
}

// usageCell shows how full a session's context window was after its last
// turn that reported it: a bar of used / window, or just the tokens when
// the engine did not say how large the window is. The bar turns to its
// warning colour at the workspace's context-pressure threshold (at 80%
// without one).
function usageCell(x, threshold) {
  const u = x.usage;
  if (!u || !u.tokens) return el("td", { class: "usage muted" }, "—");
  if (!u.window) return el("td", { class: "usage" }, `${num(u.tokens)} tokens`);
  const used = Math.round((100 * u.tokens) / u.window);
  return el("td", { class: "usage" },
    el("meter", { min: "0", max: String(u.window), value: String(u.tokens), high: String((threshold || 0.8) * u.window), "aria-label": "context used" }),
    ` ${num(u.tokens)} / ${num(u.window)} (${used}%)`);
}

// pressureText says what the workspace's context-pressure policy does.
function pressureText(p) {
  if (!p || !p.threshold) return "off";
  const to = p.target && p.target.engine ? `${p.target.engine} / ${p.target.model}` : "the same configuration";
  return `on: at ${pct(p.threshold)} of the window${p.report ? ", with a report first" : ""}, to ${to}`;
}

// fillPressure puts the policy into its form (on selection and once set:
// a refresh must not overwrite what the user is typing).
function fillPressure(p) {
  $("ws-pressure").value = String(+(100 * (p.threshold || 0)).toFixed(1));
  $("ws-pressure-report").checked = !!p.report;
}

// reasonText says why a transfer started: asked for, or the trigger that
// started it by itself, with the usage that fired it.
function reasonText(h) {
  const r = h.reason;
  if (!r || !r.trigger) return "requested";
  if (r.trigger === "context-pressure") return `context pressure: ${num(r.tokens)} / ${num(r.window)} tokens ≥ ${pct(r.threshold)}`;
  return r.trigger;
}

// refreshes counts the refreshes begun: answers can arrive out of order
// (a selection's refresh can be overtaken by a click's), and only the
// newest refresh may draw, or an older answer would hide what a newer one
// showed.
let refreshes = 0;

// refresh redraws the selected workspace and its sessions at once, from
// answers of one refresh: never the new workspace's name over the last
// one's sessions.
async function refresh() {
  if (!current) return;
  const mine = ++refreshes;
  const [w, s] = await Promise.all([api("GET", `/api/workspaces/${current}`), api("GET", `/api/workspaces/${current}/sessions`)]);
  if (mine !== refreshes) return;
  if (!workspace || workspace.id !== w.workspace.id) fillPressure(w.workspace.pressure); // just selected
  workspace = w.workspace;
  loadWorkspaces().catch(() => {});
  $("cur-ws-name").textContent = w.workspace.name;
  $("cur-ws-id").textContent = w.workspace.id;
  $("cur-ws-config").textContent = `${w.workspace.engine} / ${w.workspace.model}`;
  $("ws-share").value = w.workspace.share;
  $("handoff-share-default").textContent = `the workspace's setting (${shareText[w.workspace.share]})`;
  $("ws-pressure-shown").textContent = pressureText(w.workspace.pressure);
  currentSession = w.workspace.currentSessionId;
  $("sessions").replaceChildren(...s.sessions.map((x) => {
    const tr = el("tr", { class: x.current ? "current" : "", "data-session": x.id },
      el("td", {}, x.id, x.current ? " (current)" : ""), el("td", {}, modelText(x)), el("td", {}, x.status),
      el("td", {}, String(x.activationOrder)), el("td", {}, x.nativeId || "—"), usageCell(x, w.workspace.pressure.threshold));
    if (x.current) tr.setAttribute("aria-current", "true");
    return tr;
  }));
  await loadInstructions();
  await loadHandoffs();
}

// loadHandoffs lists the workspace's transfers, oldest first, each with
// why it started.
async function loadHandoffs() {
  const d = await api("GET", `/api/workspaces/${current}/session-handoffs`);
  $("handoffs").replaceChildren(...d.handoffs.map((h) => el("tr", { "data-handoff": h.id },
    el("td", {}, h.id), el("td", {}, h.state), el("td", {}, String(h.attempt)), el("td", { class: "why" }, reasonText(h)))));
}

async function loadInstructions() {
  const d = await api("GET", `/api/workspaces/${current}/instructions`);
  $("instructions").replaceChildren(...d.instructions.map((i) => el("tr", { "data-instruction": i.id },
    el("td", {}, i.text), el("td", { class: `state-${i.state}` }, i.state),
    el("td", {},
      i.state === "unknown" || i.state === "delivered" ? el("button", { type: "button", onclick: () => act("POST", `/instructions/${i.id}/resend`) }, "Resend") : "",
      i.state === "pending" || i.state === "unknown" ? el("button", { type: "button", onclick: () => act("DELETE", `/instructions/${i.id}`) }, "Cancel") : ""))));
}

async function act(method, suffix, body) {
  try {
    await api(method, `/api/workspaces/${current}${suffix}`, body);
    notice("");
  } catch (e) { notice(e.message); }
  await refresh().catch(() => {});
}

const order = ["stopping", "generating", "starting", "completed"];

// newer reports whether h is not older than the handoff shown: a POST's
// answer can arrive after the event stream already showed later states.
function newer(h) {
  if (!handoff || !h || handoff.id !== h.id) return true;
  if (h.attempt !== handoff.attempt) return h.attempt > handoff.attempt;
  const settled = ["completed", "cancelled", "failed", "interrupted"];
  if (settled.includes(handoff.state) && !settled.includes(h.state)) return Date.parse(h.updatedAt) > Date.parse(handoff.updatedAt);
  return Date.parse(h.updatedAt) >= Date.parse(handoff.updatedAt);
}

function showHandoff(h) {
  if (!newer(h)) return;
  handoff = h;
  $("no-transfer").hidden = !!h;
  $("transfer-body").hidden = !h;
  highlight(h ? h.state : "");
  if (!h) return;
  $("handoff-id").textContent = h.id;
  $("handoff-attempt").textContent = String(h.attempt);
  $("handoff-state").textContent = h.state;
  $("handoff-share-shown").textContent = shareText[h.share] || h.share || "";
  $("handoff-why").textContent = reasonText(h);
  const idx = order.indexOf(h.state);
  for (const li of $("steps").children) {
    const i = order.indexOf(li.dataset.step);
    li.className = "";
    li.removeAttribute("aria-current");
    if (h.state === "completed" || (idx >= 0 && i < idx)) li.className = "done";
    if (idx >= 0 && i === idx && h.state !== "completed") { li.className = "active"; li.setAttribute("aria-current", "step"); }
  }
  if (h.state === "failed" || h.state === "interrupted") {
    // The step that failed: the target's start once it has a session, the
    // report while one was asked for and is missing, else the stop.
    const failedAt = h.targetSessionId ? "starting" : (h.generateSummary && !h.hasReport ? "generating" : "stopping");
    const at = order.indexOf(failedAt);
    for (const li of $("steps").children) {
      const i = order.indexOf(li.dataset.step);
      if (i < at) li.className = "done";
      if (i === at) { li.className = "bad"; li.setAttribute("aria-current", "step"); }
    }
  }
  $("handoff-error").hidden = !h.error;
  $("handoff-error").textContent = h.error || "";
  const deciding = h.state === "failed" || h.state === "interrupted";
  $("decision").hidden = !(deciding || (h.state !== "completed" && h.state !== "cancelled"));
  $("btn-retry").hidden = !deciding;
  $("btn-skip").hidden = !deciding;
  $("btn-cancel").hidden = h.state === "completed" || h.state === "cancelled";
  $("report-box").hidden = !h.report;
  $("report").textContent = h.report || "";
}

function follow(id) {
  if (source) source.close();
  source = new EventSource(`/api/workspaces/${id}/events`);
  const log = (kind, text) => {
    const li = el("li", {}, `${kind}: ${text}`);
    $("event-log").append(li);
    $("event-log").scrollTop = $("event-log").scrollHeight;
  };
  source.addEventListener("handoff", (e) => {
    const d = JSON.parse(e.data);
    log("handoff", `${d.handoff.state} (attempt ${d.handoff.attempt})`);
    if (!handoff || handoff.id === d.handoff.id || d.handoff.createdAt >= handoff.createdAt) showHandoff(d.handoff);
    loadHandoffs().catch(() => {});
    if (d.handoff.state === "completed" || d.handoff.state === "cancelled") refresh().catch(() => {});
  });
  source.addEventListener("session", (e) => {
    const d = JSON.parse(e.data);
    log("session", `${d.session.id} ${d.session.status}`);
    refresh().catch(() => {});
  });
  // The server is behind what this page saw (its store was reset): the
  // stream goes on from the server's last sequence; reload everything.
  source.addEventListener("reset", () => {
    log("stream", "reset: reloading");
    refresh().catch(() => {});
    loadInstructions().catch(() => {});
  });
  source.addEventListener("instruction", (e) => {
    const d = JSON.parse(e.data);
    log("instruction", `${d.instruction.text} → ${d.instruction.state}`);
    loadInstructions().catch(() => {});
  });
}

async function loadMachine() {
  const res = await fetch("/api/machine.svg");
  const doc = new DOMParser().parseFromString(await res.text(), "image/svg+xml");
  $("machine").replaceChildren(document.importNode(doc.documentElement, true));
  highlight(handoff ? handoff.state : "");
}

function highlight(state) {
  for (const g of document.querySelectorAll("#machine g.state")) g.classList.toggle("active", g.dataset.state === state);
}

function wire() {
  $("new-ws").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const d = await api("POST", "/api/workspaces", { name: $("new-ws-name").value, engine: "demo", model: $("new-ws-model").value });
      await select(d.workspace.id);
    } catch (err) { notice(err.message); }
  });
  $("start-form").addEventListener("submit", (e) => { e.preventDefault(); act("POST", "/sessions", { prompt: $("start-prompt").value }); });
  $("message-form").addEventListener("submit", (e) => { e.preventDefault(); act("POST", "/messages", { text: $("message-text").value }); });
  $("stop").addEventListener("click", () => act("POST", "/stop"));
  $("open-handoff").addEventListener("click", () => { $("handoff-share").value = ""; $("handoff-dialog").showModal(); });
  $("ws-share").addEventListener("change", async () => {
    try {
      await api("PUT", `/api/workspaces/${current}/share`, { share: $("ws-share").value });
      await refresh();
      notice("");
    } catch (err) { notice(err.message); }
  });
  $("pressure-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const d = await api("PUT", `/api/workspaces/${current}/pressure`,
        { threshold: Number($("ws-pressure").value) / 100, report: $("ws-pressure-report").checked });
      fillPressure(d.workspace.pressure);
      await refresh();
      notice("");
    } catch (err) { notice(err.message); }
  });
  $("close-handoff").addEventListener("click", () => $("handoff-dialog").close());
  $("handoff-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("handoff-dialog").close();
    try {
      const d = await api("POST", `/api/workspaces/${current}/session-handoffs`, {
        requestId: crypto.randomUUID(), sourceSessionId: currentSession, generateSummary: $("generate-summary").checked,
        share: $("handoff-share").value,
        target: { engine: $("target-engine").value, model: $("target-model").value },
      });
      showHandoff(d.handoff);
      notice("");
    } catch (err) { notice(err.message); }
  });
  for (const [btn, action] of [["btn-retry", "retry"], ["btn-skip", "skip"], ["btn-cancel", "cancel"]]) {
    $(btn).addEventListener("click", async () => {
      if (!handoff) return;
      try {
        const d = await api("POST", `/api/workspaces/${current}/session-handoffs/${handoff.id}/decision`, { action });
        showHandoff(d.handoff);
        notice("");
      } catch (err) { notice(err.message); }
    });
  }
}

// checkHealth shows why the server is not ready (/readyz: a store that
// cannot persist, a shutdown), and hides the notice once it is.
async function checkHealth() {
  try {
    const res = await fetch("/readyz");
    const d = await res.json();
    $("health").hidden = res.ok;
    $("health").textContent = res.ok ? "" : `Not ready: ${d.reason || d.status}. Nothing new is saved.`;
  } catch (err) {
    $("health").hidden = false;
    $("health").textContent = "The server cannot be reached.";
  }
}

wire();
checkHealth();
setInterval(checkHealth, 5000);
Promise.all([loadEngines(), loadWorkspaces(), loadMachine()]).catch((e) => notice(e.message));
