// gpuplan's page: forms that POST to the JSON API and render what it returns (tables and inline SVG).
// Nothing here estimates or ranks anything; every number comes from /api/plan, /api/serve or /api/estimate.
// Vanilla JS, no network beyond this server, no build step.
"use strict";

const CHART_TOP = 30;  // plans asked for: the chart shows them all, the table the first TABLE_ROWS
const TABLE_ROWS = 10;
const SVG_NS = "http://www.w3.org/2000/svg";
const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                 "#9c755f", "#bab0ac", "#86bcb6", "#d37295"];

const state = { lang: "en", labels: {}, labelsEn: {}, templates: {}, patterns: [], meta: null, plan: null,
                estimate: null, serve: null };

// ---------------------------------------------------------------- helpers

// Chinese labels: the one catalogue the CLI uses too (gpuplan/i18n.py), from /api/meta
function t(text) {
  if (state.lang !== "zh") return state.labelsEn[text] || text;
  return state.labels[text] || text;
}

// Sentences the API makes in English with values in them (notes, assumptions, why nothing fits), in Chinese by
// the templates the CLI uses (gpuplan.i18n.TEMPLATES, from /api/meta): "{expression}" in a template stands for
// any text, "{expression|t}" for text translated in turn, "{expression|l}" for a list of phrases
const HOLE = /\{[^{}]*\}/g;

function compileTemplates(templates) {
  const found = [];
  for (const [en, zh] of Object.entries(templates)) {
    const holes = en.match(HOLE) || [];
    const literal = en.split(HOLE);
    if (!holes.length || literal.join("").replace(/[^A-Za-z]/g, "").length < 2) continue;
    const escaped = literal.map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    found.push({ size: literal.join("").length, pattern: new RegExp(`^${escaped.join("([\\s\\S]*?)")}$`), holes, zh });
  }
  return found.sort((a, b) => b.size - a.size);
}

function ts(text) {
  if (state.lang !== "zh" || !text) return text;
  const exact = state.templates[text] || state.labels[text];
  if (exact) return exact;
  for (const { pattern, holes, zh } of state.patterns) {
    const m = text.match(pattern);
    if (!m) continue;
    const values = Object.fromEntries(holes.map((hole, i) => [hole, m[i + 1]]));
    return zh.replace(HOLE, (hole) => {
      const bar = hole.indexOf("|");
      const name = bar < 0 ? hole : `${hole.slice(0, bar)}}`, how = bar < 0 ? "" : hole.slice(bar + 1, -1);
      const value = values[name] ?? hole;
      return how === "t" ? ts(value) : how === "l" ? value.split(", ").map(ts).join("，") : value;
    });
  }
  return text;
}

function $(selector, root = document) { return root.querySelector(selector); }

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

// the formats of gpuplan.units.fmt_bytes / fmt_seconds / fmt_money
function fmtBytes(n) {
  for (const [unit, size] of [["TiB", 2 ** 40], ["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]]) {
    if (Math.abs(n) >= size) return `${(n / size).toFixed(1)} ${unit}`;
  }
  return `${Math.round(n)} B`;
}

function fmtSeconds(s) {
  if (!Number.isFinite(s)) return "∞";
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s.toFixed(1)} s`;
  if (s < 3600) return `${(s / 60).toFixed(1)} min`;
  if (s < 2 * 86400) {
    const minutes = Math.round(s / 60);
    return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
  }
  return `${(s / 86400).toFixed(1)} days`;
}

function fmtMoney(amount, currency) {
  const sign = { USD: "$", CNY: "¥" }[currency] ?? `${currency} `;
  const a = Math.abs(amount);
  const digits = a >= 1000 ? 0 : (a >= 0.1 || amount === 0) ? 2 : 4;
  const text = a.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return `${amount < 0 ? "-" : ""}${sign}${text}`;
}

function fillTable(table, headers, rows) {
  const head = $("thead", table);
  const body = $("tbody", table);
  head.replaceChildren(el("tr", {}, ...headers.map((h) => el("th", {}, h))));
  // each cell names its column (data-label): on a phone the rows show as cards, one line per column
  body.replaceChildren(...rows.map((cells) => el("tr", {}, ...cells.map((c, i) => el("td", { "data-label": headers[i] ?? "" },
                                                                                     c ?? "—")))));
}

// ---------------------------------------------------------------- API

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw { error: t("Could not reach the gpuplan server."), field: null, fix: "gpuplan web" };
  }
  let data;
  try {
    data = await res.json();
  } catch {
    data = { error: `${res.status} ${res.statusText}`, field: null, fix: "" };
  }
  if (!res.ok) throw data;
  return data;
}

// ---------------------------------------------------------------- forms

function showTaskFields(form) {
  const task = form.elements.task.value;
  for (const box of form.querySelectorAll(".field[data-tasks]")) {
    box.hidden = !box.dataset.tasks.split(" ").includes(task);
  }
}

function fieldValue(input) {
  const raw = input.value.trim();
  switch (input.dataset.kind) {
    case "int":
    case "number": return raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) : raw;
    case "list": return raw.split(/[\s,]+/).filter(Boolean);
    case "numbers": return raw.split(/[\s,]+/).filter(Boolean).map((v) => (Number.isFinite(Number(v)) ? Number(v) : v));
    case "bool": return raw === "true";
    case "check": return input.checked;
    case "ms": return raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) / 1000 : raw;  // the API takes seconds
    case "days": return raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) * 86400 : raw;
    default: return raw;  // counts such as "10k" are parsed by the API
  }
}

function formBody(form) {
  const body = {};
  for (const box of form.querySelectorAll(".field:not([data-custom])")) {
    const input = $("input, select", box);
    if (box.hidden || !input || input.value.trim() === "") continue;
    body[input.name] = fieldValue(input);
  }
  return body;
}

function clearErrors(form) {
  for (const box of form.querySelectorAll(".field.invalid")) {
    box.classList.remove("invalid");
    $(".err", box)?.remove();
  }
  const general = $(".form-error", form);
  general.hidden = true;
  general.textContent = "";
}

// The API's {"error", "field", "fix"} (in Chinese mode its "error_zh", "fix_zh") next to the form field it names,
// or under the form.
function showError(form, err) {
  clearErrors(form);
  const zh = state.lang === "zh" && err.error_zh;
  const message = zh ? err.error_zh : err.error, fix = zh ? err.fix_zh : err.fix;
  const text = message + (fix ? ` — ${t("To fix")}: ${fix}` : "");
  // a box may stand for several fields (the request sizes: buckets, prompt and output)
  const box = err.field ? form.querySelector(`.field[data-field~="${CSS.escape(err.field)}"]`) : null;
  if (box && !box.hidden) {
    box.classList.add("invalid");
    box.append(el("div", { class: "err", role: "alert" }, text));
    $("input, select", box).focus();
  } else {
    const general = $(".form-error", form);
    general.textContent = text;
    general.hidden = false;
  }
}

async function submit(form, path, extra, render, status, body = formBody) {
  clearErrors(form);
  status.textContent = t("Working…");
  try {
    render(await api(path, { ...body(form), ...extra }));
  } catch (err) {
    showError(form, err);
  } finally {
    status.textContent = "";
  }
}

// ---------------------------------------------------------------- charts

function logTicks(lo, hi, candidates, most = 6) {
  const inside = candidates.filter((v) => v >= lo && v <= hi);
  if (inside.length <= most) return inside;
  const step = Math.ceil(inside.length / most);
  return inside.filter((_, i) => i % step === 0);
}

// Charts are drawn at the width they are shown at (one SVG unit = one CSS pixel), so their text keeps its size
// on a phone instead of shrinking with a scaled-down picture.
function chartWidth(node, widest) {
  return Math.round(Math.max(280, Math.min(widest, node?.clientWidth || widest)));
}

function shortConfig(config) {
  return config.split(" (")[0];  // "8× H100 (DP8 ZeRO-3)" → "8× H100"
}

function costCandidates() {
  const out = [];
  for (let e = -3; e <= 9; e++) for (const m of [1, 2, 5]) out.push(m * 10 ** e);
  return out;
}

const TIME_TICKS = [1, 10, 60, 300, 600, 1800, 3600, 2 * 3600, 6 * 3600, 12 * 3600, 86400, 3 * 86400,
                    7 * 86400, 30 * 86400, 90 * 86400, 365 * 86400];

function fmtTick(s) {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${s / 60} min`;
  if (s < 86400) return `${s / 3600} h`;
  return `${s / 86400} d`;
}

function logScale(values, from, to) {
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi / lo < 2) { lo /= 1.5; hi *= 1.5; }
  lo /= 1.15; hi *= 1.15;
  const a = Math.log10(lo);
  const b = Math.log10(hi);
  const f = (v) => from + (Math.log10(v) - a) / (b - a) * (to - from);
  f.lo = lo; f.hi = hi;
  return f;
}

function candidateKey(c) {
  return [c.config, c.provider, c.offer?.instance_type, c.offer?.pricing, c.cost.total].join("|");
}

// Cost against time: every plan grey, the Pareto front highlighted and joined, the pick ringed.
function paretoChart(data, W = 560) {
  const H = 320, L = 70, R = 16, T = 14, B = 46;
  const all = new Map();
  for (const c of [...data.ranked, ...data.pareto]) if (c.cost.total > 0) all.set(candidateKey(c), c);
  const points = [...all.values()];
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "pareto", role: "img" });
  if (!points.length) return el("div");
  const x = logScale(points.map((c) => c.calendar_seconds), L, W - R);
  const y = logScale(points.map((c) => c.cost.total), H - B, T);
  root.append(svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }),
              svg("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }));
  const most = Math.max(3, Math.floor((W - L - R) / 70));  // ticks at least ~70 px apart
  for (const v of logTicks(x.lo, x.hi, TIME_TICKS, most)) {
    root.append(svg("line", { x1: x(v), y1: T, x2: x(v), y2: H - B, class: "grid" }),
                svg("text", { x: x(v), y: H - B + 16, class: "tick", "text-anchor": "middle" }, fmtTick(v)));
  }
  for (const v of logTicks(y.lo, y.hi, costCandidates())) {
    root.append(svg("line", { x1: L, y1: y(v), x2: W - R, y2: y(v), class: "grid" }),
                svg("text", { x: L - 6, y: y(v) + 4, class: "tick", "text-anchor": "end" }, fmtMoney(v, data.currency)));
  }
  root.append(svg("text", { x: (L + W - R) / 2, y: H - 8, class: "label", "text-anchor": "middle" }, t("Time (log scale)")),
              svg("text", { x: 14, y: (T + H - B) / 2, class: "label", "text-anchor": "middle",
                            transform: `rotate(-90 14 ${(T + H - B) / 2})` }, t("Cost (log scale)")));
  const front = new Set(data.pareto.map(candidateKey));
  const line = data.pareto.filter((c) => c.cost.total > 0).map((c) => `${x(c.calendar_seconds)},${y(c.cost.total)}`);
  root.append(svg("polyline", { points: line.join(" "), class: "front-line" }));
  const pick = data.pick ? candidateKey(data.pick) : null;
  for (const c of points) {
    const key = candidateKey(c);
    const dot = svg("circle", { cx: x(c.calendar_seconds), cy: y(c.cost.total), r: front.has(key) ? 5 : 4,
                                class: `pt${front.has(key) ? " front" : ""}${key === pick ? " pick" : ""}` });
    dot.append(svg("title", {}, `${c.config} — ${c.provider}: ${fmtSeconds(c.calendar_seconds)}, ` +
                                `${fmtMoney(c.cost.total, c.cost.currency)}`));
    root.append(dot);
  }
  // the front's points (and the pick) named on the chart, each label left of its point when it would run out
  for (const c of points.filter((p) => front.has(candidateKey(p)) || candidateKey(p) === pick)) {
    const px = x(c.calendar_seconds);
    const left = px > W - R - 90;
    root.append(svg("text", { x: left ? px - 8 : px + 8, y: y(c.cost.total) - 6, class: "pt-label",
                              "text-anchor": left ? "end" : "start" }, shortConfig(c.config)));
  }
  const box = el("div", { class: "pareto-box" });
  box.append(root, legend([["var(--front)", t("Pareto front"), ""], ["#afb8c1", t("other plans"), ""],
                           [null, t("Pick"), "", "pick"]]));
  return box;
}

// The colour goes through the CSSOM: the page's Content-Security-Policy refuses style attributes.
function legend(entries) {
  const swatch = (color, cls) => {
    const node = el("span", { class: `swatch ${cls || ""}` });
    if (color) node.style.background = color;
    return node;
  };
  return el("ul", { class: "legend" }, ...entries.map(([color, name, value, cls]) => el("li", {},
    swatch(color, cls), `${name} `, el("span", { class: "value" }, value))));
}

// One stacked bar: the breakdown parts, the headroom, and a mark at the GPU's memory.
function breakdownBar(parts, neededBytes, capacityBytes, W = 560) {
  const H = 64, L = 4, R = 4, Y = 8, BAR = 30;
  const entries = Object.entries(parts).filter(([, v]) => v > 0);
  const total = entries.reduce((s, [, v]) => s + v, 0);
  const scale = (W - L - R) / (Math.max(neededBytes, capacityBytes, total) * 1.02);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "breakdown", role: "img" });
  let at = L;
  const keys = [];
  entries.forEach(([name, value], i) => {
    const seg = svg("rect", { x: at, y: Y, width: Math.max(value * scale, 0.5), height: BAR,
                              fill: PALETTE[i % PALETTE.length], class: "seg", "data-part": name });
    seg.append(svg("title", {}, `${t(name)}: ${fmtBytes(value)}`));
    root.append(seg);
    keys.push([PALETTE[i % PALETTE.length], t(name), fmtBytes(value)]);
    at += value * scale;
  });
  if (neededBytes > total) {
    root.append(svg("rect", { x: at, y: Y, width: (neededBytes - total) * scale, height: BAR, class: "headroom" }));
    keys.push([null, t("headroom"), fmtBytes(neededBytes - total), "headroom"]);
  } else if (neededBytes < total) {
    // training: the allocator's cache is given back when memory runs short, so what must fit ends inside the bar
    const need = L + neededBytes * scale;
    root.append(svg("line", { x1: need, y1: Y - 4, x2: need, y2: Y + BAR + 4, class: "needed" }));
    keys.push([null, t("needed to run"), fmtBytes(neededBytes), "needed"]);
  }
  const cap = L + capacityBytes * scale;
  root.append(svg("line", { x1: cap, y1: 2, x2: cap, y2: Y + BAR + 6, class: "capacity" }),
              svg("text", { x: Math.min(cap, W - 4), y: Y + BAR + 20, class: "tick", "text-anchor": "end" },
                  `${t("capacity")} ${fmtBytes(capacityBytes)}`));
  const box = el("div", { class: "breakdown-box" });
  box.append(root, legend(keys));
  return box;
}

// ---------------------------------------------------------------- plan

const TASK_LABELS = { finetune: "fine-tune", pretrain: "pretrain", infer: "batch inference", serve: "serving" };
const OBJECTIVE_LABELS = { cost: "cheapest", time: "fastest", value: "best value (work per money)" };

function whereLabel(c) {
  // ⚠: the price is older than 90 days (the API's offer.stale); the notes say how old, or that it is undated
  if (c.offer) return `${c.provider} (${c.offer.instance_type})` + (c.offer.stale ? " ⚠" : "");
  if (c.platform) return `${c.platform.platform} ${c.platform.tier}`;
  return c.provider;
}

// A ranked plan as table cells (serving fleets have their own tab and view, below).
function planRow(c, rank) {
  const memory = `${fmtBytes(c.memory_needed_bytes)} / ${fmtBytes(c.memory_available_bytes)}`;
  return [String(rank), c.config, c.settings, whereLabel(c), fmtSeconds(c.calendar_seconds),
          fmtMoney(c.cost.total, c.cost.currency), memory, c.notes.map(ts).join("; ")];
}

function planHeaders() {
  return ["#", t("Config"), t("Settings"), t("Provider"), t("Time"), t("Cost"), t("Memory needed / available"),
          t("Notes")];
}

function renderAlternatives(data) {
  const box = $("#plan-alternatives");
  const alts = data.alternatives || [];
  if (!alts.length) return box.replaceChildren();
  const table = el("table", { class: "data" }, el("thead"), el("tbody"));
  fillTable(table, [t("Change"), t("Saving"), t("Pick"), t("Cost")], alts.map((a) =>
    [ts(a.change), `−${Math.round(a.saving * 100)} %`, a.pick, fmtMoney(a.cost, a.currency)]));
  box.replaceChildren(el("h3", {}, t("Cheaper alternatives")), table);
}

function renderPlan(data) {
  state.plan = data;
  $("#plan-results").hidden = false;
  $("#plan-title").textContent = `${t("Plans")}: ${data.model} — ${t(TASK_LABELS[data.task])}, ` +
                                 `${t("by")} ${t(OBJECTIVE_LABELS[data.objective])}`;
  $("#plan-explanation").textContent = state.lang === "zh" && data.explanation_zh ? data.explanation_zh
                                                                                  : data.explanation;
  renderNothingFits(data);
  fillTable($("#plan-table"), planHeaders(), data.ranked.slice(0, TABLE_ROWS).map((c, i) => planRow(c, i + 1)));
  renderAlternatives(data);
  $("#plan-table").hidden = !data.ranked.length;
  $("#plan-caption").textContent = `${data.configs_that_fit} ${t("configurations fit of")} ` +
                                   `${data.configs_considered} ${t("considered")}`;
  $("#pareto-figure").hidden = !data.ranked.length;
  $("#pareto-chart").replaceChildren(paretoChart(data, chartWidth($("#pareto-chart"), 560)));
  $("#pick-figure").hidden = !data.pick;
  if (data.pick) {
    const e = data.pick.estimate;
    $("#pick-breakdown").replaceChildren(breakdownBar(e.memory.breakdown_bytes, e.memory_needed_bytes,
                                                      e.memory_available_bytes, chartWidth($("#pick-breakdown"), 560)));
  }
  renderPlatforms(data);
  $("#plan-json").textContent = JSON.stringify(data, null, 2);
}

function renderNothingFits(data) {
  const box = $("#plan-nothing");
  box.hidden = !data.nothing_fits;
  if (!data.nothing_fits) return box.replaceChildren();
  const table = el("table", { class: "data" }, el("thead"), el("tbody"));
  fillTable(table, [t("Change"), t("Pick"), t("Cost"), t("Time")], data.suggestions.map((s) =>
    [ts(s.change), s.pick, fmtMoney(s.cost, s.currency), fmtSeconds(s.seconds)]));
  box.replaceChildren(el("p", {}, `${t("No plan")}: ${ts(data.nothing_fits)}`),
                      ...(data.suggestions.length ? [el("h3", {}, t("Changes that would make it fit")), table] : []));
}

function renderPlatforms(data) {
  const box = $("#plan-platforms");
  if (!data.platforms.length) return box.replaceChildren();
  const table = el("table", { class: "data" }, el("thead"), el("tbody"));
  fillTable(table, [t("Platform"), t("Config"), t("Time"), t("Cost"), t("Notes")], data.platforms.map((c) =>
    [whereLabel(c), c.config, fmtSeconds(c.calendar_seconds), fmtMoney(c.cost.total, c.cost.currency),
     c.notes.map(ts).join("; ")]));
  box.replaceChildren(el("h3", {}, t("Free and cheap platforms")), table);
}

// The pick's configuration, as estimate-form values (the setup dict of the plan's JSON).
function pickFields(plan, planForm) {
  const c = plan.pick;
  const s = c.estimate.setup;
  const fields = { model: plan.model, task: plan.task, gpu: c.gpu, n_gpus: c.n_gpus };
  if (s.parallel) {
    Object.assign(fields, { tp: s.parallel.tp, pp: s.parallel.pp, zero: s.parallel.zero, method: s.method,
                            precision: s.precision, micro_batch: s.micro_batch, grad_accum: s.grad_accum,
                            recompute: s.recompute, seq_len: s.seq_len, framework: s.framework });
    for (const name of ["samples", "tokens_per_sample", "tokens"]) fields[name] = planForm.elements[name].value;
  } else {
    Object.assign(fields, { tp: s.tp, pp: s.pp, prompt: s.prompt_len, output: s.output_len, batch: s.batch,
                            quant: s.weight_format, engine: s.engine, n_gpus: "" });
  }
  return fields;
}

function estimatePick() {
  const form = $("#estimate-form");
  const fields = pickFields(state.plan, $("#plan-form"));
  form.elements.task.value = fields.task;
  showTaskFields(form);
  for (const [name, value] of Object.entries(fields)) {
    if (form.elements[name]) form.elements[name].value = String(value ?? "");
  }
  showTab("estimate");
  form.requestSubmit();
}

// ---------------------------------------------------------------- estimate

function breakdownRows(parts, total, fmt) {
  return Object.entries(parts).filter(([, v]) => v > 0)
    .map(([k, v]) => [t(k), fmt(v), `${Math.round(100 * v / (total || 1))} %`]);
}

function bandRows(est, key, fmt) {
  const suffix = key.split("_").pop();
  const rows = [[t("Band (p10–p90)"), `${fmt(est[`low_${suffix}`])} – ${fmt(est[`high_${suffix}`])}`,
                 `${est.band.class}, n=${est.band.calibration_rows}`]];
  if (est[`held_out_low_${suffix}`] !== undefined) {  // each source left out of the fit: setups unlike any calibrated
    rows.push([t("Held-out band"), `${fmt(est[`held_out_low_${suffix}`])} – ${fmt(est[`held_out_high_${suffix}`])}`,
               t("sources left out of the fit")]);
  }
  return rows;
}

function renderEstimate(data) {
  state.estimate = data;
  $("#estimate-results").hidden = false;
  $("#estimate-title").textContent = `${t("Memory per GPU")}: ${data.model} — ${data.config}`;
  $("#estimate-fit").textContent = `${t(data.fits ? "fits" : "does not fit")}: ${fmtBytes(data.memory_needed_bytes)} ` +
    `/ ${fmtBytes(data.memory_available_bytes)} (${Math.round(data.headroom * 100)} % ${t("headroom")})`;
  $("#estimate-fit").className = `explanation ${data.fits ? "ok" : "bad"}`;
  const mem = data.memory;
  $("#estimate-breakdown").replaceChildren(breakdownBar(mem.breakdown_bytes, data.memory_needed_bytes,
                                                        data.memory_available_bytes,
                                                        chartWidth($("#estimate-breakdown"), 760)));
  fillTable($("#estimate-memory"), [t("Part"), t("Value"), t("Share")], [
    ...breakdownRows(mem.breakdown_bytes, mem.total_bytes, fmtBytes),
    [t("Total"), fmtBytes(mem.total_bytes), "100 %"], ...bandRows(mem, "total_bytes", fmtBytes)]);
  renderTime(data.time, data.fits);
  $("#estimate-speed").textContent = data.speed ? speedLine(data) : "";
  const assumptions = [...mem.assumptions, ...(data.time ? data.time.assumptions : [])];
  fillTable($("#estimate-assumptions"), [t("Name"), t("Value"), t("Source")],
            assumptions.map((a) => [t(a.name), ts(a.value), ts(a.source)]));
  $("#estimate-json").textContent = JSON.stringify(data, null, 2);
}

function renderTime(time, fits) {
  const box = $("#estimate-time");
  if (!time) return box.replaceChildren();
  const table = el("table", { class: "data" }, el("thead"), el("tbody"));
  fillTable(table, [t("Part"), t("Value"), t("Share")], [
    ...breakdownRows(time.breakdown_seconds, time.total_seconds, fmtSeconds),
    [t("Total"), fmtSeconds(time.total_seconds), "100 %"], ...bandRows(time, "total_seconds", fmtSeconds)]);
  const facts = [];
  if (time.tokens_per_s) facts.push(`${Math.round(time.tokens_per_s).toLocaleString("en-US")} ${t("tokens/s")}`);
  if (time.mfu) facts.push(`MFU ${Math.round(time.mfu * 100)} %`);
  if (time.gpu_hours) facts.push(`${time.gpu_hours.toFixed(1)} ${t("GPU-hours")}`);
  // a setup that does not fit never runs: its time is what it would take with the memory it lacks
  const title = `${t(fits ? "Time" : "Time if it fit")}: ${fmtSeconds(time.total_seconds)}`;
  box.replaceChildren(el("h3", {}, title), table,
                      el("p", {}, facts.join(" · ")));
}

function speedLine(data) {
  const s = data.speed;
  const reps = data.replicas > 1 ? ` · ${data.replicas} ${t("replicas")}` : "";
  // a setup that does not fit never runs: its speed is what it would reach with the memory it lacks
  const label = t(data.fits ? "Speed" : "Speed if it fit");
  return `${label}: TTFT ${fmtSeconds(s.ttft_seconds)} · TPOT ${(s.tpot_seconds * 1000).toFixed(1)} ms · ` +
         `${Math.round(s.output_tokens_per_second).toLocaleString("en-US")} ${t("tokens/s")} ` +
         `(batch ${s.batch}, ${s.bound}-bound)${reps}` +
         (s.band ? ` · TPOT ${t("Band (p10–p90)")} ${(s.tpot_low_seconds * 1000).toFixed(1)}–` +
                   `${(s.tpot_high_seconds * 1000).toFixed(1)} ms` : "");
}

// ---------------------------------------------------------------- serving fleet (POST /api/serve)

// Request sizes: one row sends prompt and output; several send buckets whose shares add up to 1. Given as
// length percentiles instead (the API's percentiles), each row says that PCT % of the requests have at most
// its prompt and output tokens, and every row is sent.
const byPercentile = () => $("#srv-size-mode").value === "percentile";

function addBucketRow(prompt = "", output = "", share = "") {
  const rows = $("#srv-buckets");
  const n = rows.children.length + 1;
  const cell = (name, label, value, attrs) => el("label", { class: `bucket-${name}` }, el("span", { "data-i18n": label },
    t(label)), el("input", { name: `bucket_${name}`, type: "number", step: "any", value: String(value), "data-kind": "number",
                                 ...attrs }));
  const remove = el("button", { type: "button", class: "secondary remove", "data-i18n-title": "Remove this size",
                                title: t("Remove this size"), "aria-label": t("Remove this size") }, "×");
  const row = el("div", { class: "bucket-row", "data-bucket": String(n) },
                 cell("prompt", "Prompt tokens", prompt, { min: "1" }), cell("output", "Output tokens", output, { min: "1" }),
                 cell("share", byPercentile() ? "Percentile (%)" : "Share", share,
                      byPercentile() ? { min: "0", max: "100" } : { min: "0", max: "1" }), remove);
  remove.addEventListener("click", () => { row.remove(); showBucketShares(); });
  rows.append(row);
  showBucketShares();
}

// with one size there is nothing to share: its share is 1 and the row cannot be removed
function showBucketShares() {
  const rows = [...$("#srv-buckets").children];
  const label = byPercentile() ? "Percentile (%)" : "Share";
  for (const row of rows) {
    const share = $(".bucket-share", row);
    share.hidden = rows.length === 1 && !byPercentile();
    const caption = $("span", share);
    caption.dataset.i18n = label;
    caption.textContent = t(label);
    $("input", share).max = byPercentile() ? "100" : "1";
    $(".remove", row).hidden = rows.length === 1;
  }
}

function serveBody(form) {
  const body = formBody(form);
  if (body.profile) delete body.rps;  // a daily profile replaces the mean rate (its mean)
  const rows = [...$("#srv-buckets").children].map((row) => ["prompt", "output", "share"].map((name) =>
    fieldValue($(`input[name=bucket_${name}]`, row))));
  if (byPercentile()) {
    body.percentiles = rows.map(([prompt, output, percentile]) => ({ percentile, prompt, output }));
  } else if (rows.length === 1) {
    const [prompt, output] = rows[0];
    if (prompt !== "") body.prompt = prompt;
    if (output !== "") body.output = output;
  } else {
    body.buckets = rows.map(([prompt, output, share]) => ({ prompt, output, share }));
  }
  return body;
}

const PRICING_LABELS = { "on-demand": "on-demand", spot: "spot", reserved: "reserved", marketplace: "marketplace" };

function fmtPercent(fraction, digits) {
  return `${(fraction * 100).toFixed(digits)} %`;
}

function groupPlace(g) {
  return g.zone === g.region || g.zone.startsWith(`${g.region}/`) ? g.zone : `${g.region} · ${g.zone}`;
}

// the slowest p99 latencies of a group over the request sizes it can serve (as the CLI's table)
function groupLatency(g) {
  const served = g.capacity_per_replica_per_s.map((cap, i) => [cap, i]).filter(([cap]) => cap > 0).map(([, i]) => i);
  if (!served.length) return "—";
  const ttft = Math.max(...served.map((i) => g.ttft_p99_s_at_capacity[i]));
  const tpot = Math.max(...served.map((i) => g.tpot_p99_s_at_capacity[i]));
  return `${fmtSeconds(ttft)} / ${(tpot * 1000).toFixed(0)} ms`;
}

function groupRows(fleet, currency) {
  return fleet.groups.map((g) => [g.config, `${g.provider} (${g.instance_type})`, groupPlace(g),
    t(PRICING_LABELS[g.pricing] ?? g.pricing), String(g.replicas), String(g.instances), groupLatency(g),
    `${fmtMoney(g.cost_per_hour, currency)}/h`]);
}

function groupHeaders() {
  return [t("Config"), t("Provider"), t("Region / zone"), t("Pricing"), t("Replicas"), t("Instances"),
          `${t("TTFT / TPOT")} p99`, t("Cost per hour")];
}

function replicas(fleet) {
  return fleet ? fleet.groups.reduce((n, g) => n + g.replicas, 0) : 0;
}

// one headline figure: a <div> holding its <dt> and <dd> (HTML allows such groups in a <dl>)
function figure(name, value, cls = "") {
  return el("div", { class: "figure" }, el("dt", {}, name), el("dd", cls ? { class: cls } : {}, value));
}

function serveFigures(data) {
  const cur = data.currency;
  const perHour = (x) => (x === null || x === undefined ? "—" : `${fmtMoney(x, cur)}/h`);
  const perMillion = (x) => (x === null || x === undefined ? "—" : fmtMoney(x, cur));
  const target = data.request.availability;
  const met = data.expected_availability >= target;
  const r = data.recovery_seconds;
  const recovery = `${fmtSeconds(r.total)} (${t("provisioning")} ${fmtSeconds(r.provisioning)} + ` +
                   `${t("weight load")} ${fmtSeconds(r.weight_load)} + ${t("warm-up")} ${fmtSeconds(r.warmup)})`;
  const parts = [
    figure(t("Cost per hour at peak"), perHour(data.cost_per_hour_peak)),
    figure(t("Cost per hour at the mean rate"), perHour(data.cost_per_hour_average)),
    figure(t("Per 1M input tokens"), perMillion(data.cost_per_million_input_tokens)),
    figure(t("Per 1M output tokens"), perMillion(data.cost_per_million_output_tokens)),
    figure(t("Expected availability"), `${fmtPercent(data.expected_availability, 4)} (${t("target")} ` +
                                       `${+(target * 100).toFixed(4)} %)`, met ? "ok" : "bad"),
    figure(t("SLO-violation minutes per month"), `${data.violation_minutes_per_month.toFixed(1)} min`),
    figure(t("Recovery of a lost replica"), recovery),
    figure(t("Replicas at peak / at the mean rate"), `${replicas(data.fleet)} / ${replicas(data.average_load_fleet)}`),
  ];
  const day = data.daily_profile;
  if (day) {
    parts.push(figure(t("Per day following the profile"), `${fmtMoney(day.autoscaled_per_day, cur)} ` +
                      `(${t("peak fleet all day")} ${fmtMoney(day.fixed_per_day, cur)})`));
  }
  if (data.fleet.headroom > 0) parts.push(figure(t("Peak raised for availability by"), fmtPercent(data.fleet.headroom, 0)));
  return parts;
}

// The best fleet of one GPU type, and what the mix saves against it.
function singleTypeLine(data) {
  const s = data.single_type_fleet;
  const cur = data.currency;
  if (!s) return `${t("Best single-GPU-type fleet")}: —`;
  const head = `${t("Best single-GPU-type fleet")} (${s.gpu_types.join(", ")}): ${fmtMoney(s.cost_per_hour, cur)}/h`;
  if (data.fleet.gpu_types.length < 2) return `${head} · ${t("the fleet is that fleet: one GPU type")}`;
  const share = s.cost_per_hour ? Math.round(100 * data.saving_per_hour / s.cost_per_hour) : 0;
  return `${head} · ${t("the mix saves")} ${fmtMoney(data.saving_per_hour, cur)}/h (${share} %)`;
}

// A bar per GPU type × zone × pricing: its length the replicas there, its colour the GPU type, spot hatched.
function fleetBars(fleet) {
  const bars = new Map();
  for (const g of fleet.groups) {
    const key = [g.gpu, g.provider, groupPlace(g), g.spot].join("|");
    const bar = bars.get(key) ?? { gpu: g.gpu, where: `${g.provider} ${groupPlace(g)}`, spot: g.spot, replicas: 0 };
    bar.replicas += g.replicas;
    bars.set(key, bar);
  }
  return [...bars.values()].sort((a, b) => a.gpu.localeCompare(b.gpu) || b.replicas - a.replicas);
}

function gpuColours(fleet) {
  return new Map(fleet.gpu_types.map((name, i) => [name, PALETTE[i % PALETTE.length]]));
}

// width of a text at a font size, for labels that must not run past the chart (CJK characters are one em)
function textWidth(text, px) {
  return [...text].reduce((w, ch) => w + (/[\u2e80-\u9fff\uff00-\uffef]/.test(ch) ? 1 : 0.62) * px, 0);
}

function fitText(text, px, width) {
  if (textWidth(text, px) <= width) return text;
  let out = text;
  while (out.length > 1 && textWidth(`${out}…`, px) > width) out = out.slice(0, -1);
  return `${out}…`;
}

function niceStep(most, count) {
  for (const step of [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]) if (most / step <= count) return step;
  return Math.ceil(most / count);
}

function hatch(id, colour) {
  const p = svg("pattern", { id, patternUnits: "userSpaceOnUse", width: 6, height: 6,
                             patternTransform: "rotate(45)" });
  p.append(svg("rect", { width: 6, height: 6, fill: colour }), svg("line", { x1: 0, y1: 0, x2: 0, y2: 6,
                                                                            stroke: "#fff", "stroke-width": 2.5 }));
  return p;
}

function fleetChart(fleet, W = 760) {
  const bars = fleetBars(fleet);
  const colours = gpuColours(fleet);
  const L = 8, R = 40, T = 6, ROW = 46, BAR = 16, B = 40;
  const H = T + bars.length * ROW + B;
  const most = Math.max(...bars.map((b) => b.replicas));
  const x = (v) => L + v / most * (W - L - R);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "fleet", role: "img",
                            "aria-label": t("Replicas per GPU type, zone and pricing") });
  const defs = svg("defs");
  fleet.gpu_types.forEach((name, i) => defs.append(hatch(`fleet-hatch-${i}`, colours.get(name))));
  root.append(defs);
  const axisY = T + bars.length * ROW;
  const step = niceStep(most, Math.max(2, Math.floor((W - L - R) / 60)));
  for (let v = 0; v <= most; v += step) {
    root.append(svg("line", { x1: x(v), y1: T, x2: x(v), y2: axisY, class: "grid" }),
                svg("text", { x: x(v), y: axisY + 16, class: "tick", "text-anchor": "middle" }, String(v)));
  }
  root.append(svg("line", { x1: L, y1: axisY, x2: W - R, y2: axisY, class: "axis" }),
              svg("text", { x: (L + W - R) / 2, y: H - 6, class: "label", "text-anchor": "middle" }, t("Replicas")));
  bars.forEach((b, i) => {
    const top = T + i * ROW;
    const pricing = t(b.spot ? "spot" : "on-demand");
    const name = `${b.gpu} · ${b.where} · ${pricing}`;
    root.append(svg("text", { x: L, y: top + 14, class: "label bar-label" }, fitText(name, 12, W - L - 4)));
    const index = fleet.gpu_types.indexOf(b.gpu);
    const rect = svg("rect", { x: L, y: top + 20, width: Math.max(x(b.replicas) - L, 2), height: BAR,
                               fill: b.spot ? `url(#fleet-hatch-${index})` : colours.get(b.gpu),
                               class: `bar${b.spot ? " spot" : ""}`, "data-gpu": b.gpu, "data-colour": colours.get(b.gpu) });
    rect.append(svg("title", {}, `${name}: ${b.replicas} ${t("replicas")}`));
    root.append(rect, svg("text", { x: x(b.replicas) + 6, y: top + 33, class: "pt-label bar-value" }, String(b.replicas)));
  });
  const box = el("div", { class: "fleet-box" });
  box.append(root, fleetLegend(fleet, colours));
  return box;
}

// the legend in words: each GPU type's colour, and what solid and hatched bars mean
function fleetLegend(fleet, colours) {
  const swatch = (fill, defs) => {
    const s = svg("svg", { width: 14, height: 12, class: "swatch-svg", "aria-hidden": "true" });
    if (defs) s.append(defs);
    s.append(svg("rect", { x: 0.5, y: 0.5, width: 13, height: 11, rx: 2, fill, stroke: "#656d76",
                           "stroke-width": 0.5 }));
    return s;
  };
  const item = (s, text) => el("li", {}, s, ` ${text}`);
  const spotDefs = svg("defs");
  spotDefs.append(hatch("legend-hatch", "#656d76"));
  return el("ul", { class: "legend fleet-legend" },
            ...fleet.gpu_types.map((name) => item(swatch(colours.get(name)), name)),
            item(swatch("#656d76"), t("on-demand: solid")),
            item(swatch("url(#legend-hatch)", spotDefs), t("spot: hatched")));
}

function smallTable(headers, rows) {
  const table = el("table", { class: "data" }, el("thead"), el("tbody"));
  fillTable(table, headers, rows);
  return table;
}

function renderRouting(data) {
  const sizes = data.request.buckets;
  const rows = data.fleet.routing.map((r) => {
    const b = sizes[r.bucket];
    return [r.config, `${b.prompt_len} + ${b.output_len} ${t("tokens")} (${Math.round(b.share * 100)} %)`,
            r.requests_per_s.toFixed(2)];
  });
  $("#serve-routing").replaceChildren(el("h3", {}, t("Routing with nothing lost")),
                                      smallTable([t("Config"), t("Bucket"), t("req/s")], rows));
}

function renderServeNotes(data) {
  const box = $("#serve-notes");
  if (!data.notes.length) return box.replaceChildren();
  box.replaceChildren(el("h3", {}, t("Notes")), el("ul", { class: "notes" }, ...data.notes.map((n) => el("li", {}, ts(n)))));
}

// The content-safety guard of the answer (gpuplan.plan.guard.GuardPlan.as_dict), when the request asked for one.
const GUARD_PLACES = { separate: "on its own GPUs", colocated: "beside the main model, on its GPUs",
                       mig: "on MIG slices", api: "a moderation service" };

function renderGuard(data) {
  const box = $("#serve-guard");
  const g = data.guard;
  box.hidden = !g || typeof g !== "object";
  if (box.hidden) return box.replaceChildren();
  const cur = data.currency;
  const facts = [figure(t(g.kind === "api" ? "Moderation service" : "Guard model"), String(g.model ?? g.service)),
                 figure(t("Where it runs"), t(GUARD_PLACES[g.placement] ?? g.placement))];
  if (g.placement === "colocated") {
    facts.push(figure(t("Cost per hour"), t("in the main fleet's cost (it shares its GPUs)")));
  } else if (typeof g.cost_per_hour_peak === "number") {
    facts.push(figure(t("Cost per hour"), `${fmtMoney(g.cost_per_hour_peak, cur)}/h ${t("at peak")}, ` +
      `${fmtMoney(g.cost_per_hour_average, cur)}/h ${t("at the mean rate")}`));
  }
  if (typeof g.added_latency_p99_s === "number") {
    facts.push(figure(t("Added to the first token (p50 / p99)"),
      `${fmtSeconds(g.added_latency_p50_s)} / ${fmtSeconds(g.added_latency_p99_s)} (${t(g.mode)})`));
  }
  if (g.kind === "model" && typeof g.availability === "number") {
    facts.push(figure(t("Guard availability"), fmtPercent(g.availability, 3)));
  }
  const why = g.reason ? [el("p", { class: "why" }, ts(g.reason))] : [];
  box.replaceChildren(el("h3", {}, t("Content-safety guard")), el("dl", { class: "figures" }, ...facts), ...why);
}

function link(url) {
  return /^https?:\/\//.test(url)  // a source's address opens in a new tab; other sources are text
    ? el("a", { href: url, rel: "noreferrer noopener", target: "_blank" }, url) : url;
}

// The China compliance checklist in the page's language: what each rule asks, whether it changes the plan.
function renderCompliance(data) {
  const box = $("#serve-compliance");
  const c = data.compliance;
  box.hidden = !c;
  if (!c) return box.replaceChildren();
  const zh = state.lang === "zh";
  const rows = c.items.map((i, n) => {
    const source = el("span", {}, link(i.source), ` (${t("checked")} ${i.date_checked})`);
    return [String(n + 1), `${zh ? i.name_zh : i.name_en} — ${zh ? i.authority_zh : i.authority_en}`,
            el("span", {}, i.issued, el("br"), i.in_force), zh ? i.asks_zh : i.asks_en, t(i.changes_plan ? "yes" : "no"), source];
  });
  const table = smallTable(["#", t("Rule"), t("Issued / in force"), t("What it asks"), t("Changes the plan"),
                            t("Source")], rows);
  table.id = "serve-checklist";
  const parts = [el("h3", {}, t("China compliance checklist")),
                 el("p", { class: "disclaimer", id: "serve-disclaimer" }, zh ? c.disclaimer_zh : c.disclaimer)];
  if (c.data_export_applies) {
    parts.push(el("p", { class: "nothing" }, zh ? c.data_export_note_zh : c.data_export_note,
                  c.abroad.length ? ` (${c.abroad.join(", ")})` : ""));
  }
  box.replaceChildren(...parts, table);
}

function renderServe(data) {
  state.serve = data;
  $("#serve-results").hidden = false;
  const r = data.request;
  const sizes = r.buckets.map((b) => `${b.prompt_len} + ${b.output_len}`).join(", ");
  $("#serve-title").textContent = `${t("Fleet")}: ${data.model} — ${r.mean_rps} ${t("req/s")} ${t("mean")}, ` +
                                  `${r.peak_rps} ${t("peak")} × ${sizes} ${t("tokens")}`;
  const nothing = $("#serve-nothing");
  nothing.hidden = Boolean(data.fleet);
  nothing.textContent = data.fleet ? "" : `${t("No plan")}: ${ts(data.nothing_fits)}`;
  $("#serve-fleet").hidden = !data.fleet;
  if (data.fleet) renderFleet(data);
  fillTable($("#serve-assumptions"), [t("Name"), t("Value"), t("Source")],
            data.assumptions.map((a) => [t(a.name), ts(a.value), ts(a.source)]));
  renderCompliance(data);
  $("#serve-json").textContent = JSON.stringify(data, null, 2);
}

function renderFleet(data) {
  const f = data.fleet;
  $("#serve-figures").replaceChildren(...serveFigures(data));
  $("#serve-why").textContent = singleTypeLine(data);
  fillTable($("#serve-groups"), groupHeaders(), groupRows(f, data.currency));
  const gap = f.optimality_gap > 0 ? ` · ${t("optimality gap")} ${fmtPercent(f.optimality_gap, 1)}` : "";
  $("#serve-caption").textContent = `${data.pools} ${t("pools")} · ${data.configurations.length} ` +
    `${t("configurations")} · ${data.scenarios} ${t("failure scenarios")} · ${t("planned in")} ` +
    `${fmtSeconds(data.seconds)}${gap} · ${t("TTFT / TPOT p99 at the most a replica is given")}`;
  $("#serve-chart").replaceChildren(fleetChart(f, chartWidth($("#serve-chart"), 760)));
  renderRouting(data);
  renderServeNotes(data);
  renderGuard(data);
}

// ---------------------------------------------------------------- language, tabs, start

function applyLang(lang) {
  state.lang = lang;
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll("[data-i18n-title]")) {
    node.title = t(node.dataset.i18nTitle);
    node.setAttribute("aria-label", node.title);
  }
  for (const b of document.querySelectorAll(".lang button")) b.classList.toggle("active", b.dataset.lang === lang);
  try { localStorage.setItem("gpuplan-lang", lang); } catch { /* private mode */ }
  renderMeta();
  if (state.plan) renderPlan(state.plan);
  if (state.estimate) renderEstimate(state.estimate);
  if (state.serve) renderServe(state.serve);
}

function showTab(name) {
  for (const b of document.querySelectorAll(".tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== `tab-${name}`;
}

function fillDatalist(id, values) {
  $(id).replaceChildren(...values.map((v) => el("option", { value: v })));
}

async function loadCatalog() {
  const [meta, models, gpus] = await Promise.all([api("/api/meta"), api("/api/models"), api("/api/gpus")]);
  state.labels = meta.labels.zh;
  state.labelsEn = meta.labels.en || {};
  state.templates = (meta.templates || {}).zh || {};
  state.patterns = compileTemplates(state.templates);
  fillDatalist("#model-list", models.map((m) => m.name));
  fillDatalist("#gpu-list", gpus.map((g) => g.name));
  fillDatalist("#quant-list", meta.choices.quant);
  $("#srv-guard").replaceChildren(...meta.choices.guard.map((name) =>
    el("option", name === "none" ? { value: name, selected: "", "data-i18n": "none" } : { value: name },
       name === "none" ? t("none") : name)));
  state.meta = meta;
}

function renderMeta() {
  const meta = state.meta;
  if (!meta) return;
  const c = meta.counts;
  $("#meta-line").textContent = `gpuplan ${meta.version} · ${c.gpus} ${t("GPUs")} · ${c.offers} ${t("offers")} · ` +
    `${c.providers} ${t("providers")} · ${c.models} ${t("models")} · ${t("calibration")} ${meta.calibration.fitted_on}`;
}

// Fields both forms share are written once in index.html (<template>s); each form gets its own copy, with
// the form's id prefix in place of "{p}" so that every label still points at its own input.
function fillTemplates() {
  for (const slot of document.querySelectorAll("[data-template]")) {
    const prefix = slot.closest("form").dataset.prefix;
    slot.outerHTML = $(`#${slot.dataset.template}`).innerHTML.replaceAll("{p}", prefix);
  }
}

function setUp() {
  fillTemplates();
  const planForm = $("#plan-form");
  const estimateForm = $("#estimate-form");
  const serveForm = $("#serve-form");
  planForm.elements.task.querySelector("option[value=serve]").remove();  // fleets: the serving tab (/api/serve)
  for (const form of [planForm, estimateForm]) {
    form.elements.task.addEventListener("change", () => { showTaskFields(form); clearErrors(form); });
    showTaskFields(form);
  }
  // methods that train new weights (Method.new_weights) train in pure bf16 as the planner assumes; the rest in
  // mixed precision
  const NEW_WEIGHTS = ["lora", "qlora", "dora", "adalora", "ptuning", "adapter", "adapter-v2"];
  const precision = () => {
    const f = estimateForm.elements;
    const adapter = f.task.value === "finetune" && NEW_WEIGHTS.includes(f.method.value);
    f.precision.value = adapter ? "bf16" : "bf16-mixed";
  };
  estimateForm.elements.method.addEventListener("change", precision);
  estimateForm.elements.task.addEventListener("change", precision);
  planForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submit(planForm, "/api/plan", { top: CHART_TOP, alternatives: true }, renderPlan, $("#plan-status"));
  });
  estimateForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submit(estimateForm, "/api/estimate", {}, renderEstimate, $("#estimate-status"));
  });
  serveForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submit(serveForm, "/api/serve", {}, renderServe, $("#serve-status"), serveBody);
  });
  addBucketRow(1000, 300, 1);
  $("#srv-add-bucket").addEventListener("click", () => addBucketRow());
  $("#srv-size-mode").addEventListener("change", showBucketShares);
  $("#pick-estimate").addEventListener("click", estimatePick);
  for (const b of document.querySelectorAll(".tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));
  for (const b of document.querySelectorAll(".lang button")) b.addEventListener("click", () => applyLang(b.dataset.lang));
  let saved = "en";
  try { saved = localStorage.getItem("gpuplan-lang") || "en"; } catch { /* private mode */ }
  loadCatalog().then(() => applyLang(saved)).catch((err) => showError(planForm, err));
}

setUp();
