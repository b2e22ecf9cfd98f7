// reflexion-bench view: the page's renderer (vanilla JS, no build step, no network
// beyond the local server that served it). Every text from a log goes into the DOM as
// text (textContent), never as HTML: a candidate program or a model reply cannot
// inject markup. Routes live in the hash so the exported file works from file://.
"use strict";
(function () {
  const boot = JSON.parse(document.getElementById("rb-boot").textContent);
  const served = boot.mode === "served";
  const main = document.getElementById("rb-main");
  const crumbs = document.getElementById("rb-crumbs");
  const statusEl = document.getElementById("rb-status");
  let refreshTimer = null;
  let renderToken = 0;

  // ------------------------------------------------------------------ data access
  async function getJSON(url) {
    const res = await fetch(url, { cache: "no-store" });
    if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    return res.json();
  }
  const exportTasks = {};
  function exportTask(runId, taskId) {
    const run = boot.runs[String(runId)];
    const block = run && run.task_blocks[taskId];
    if (!block) return null;
    if (!(block in exportTasks)) {
      // Parsed only when opened: the file holds every trial, the page reads one task.
      exportTasks[block] = JSON.parse(document.getElementById(block).textContent);
    }
    return exportTasks[block];
  }
  const api = {
    index: () => (served ? getJSON("/api/index") : Promise.resolve(boot.index)),
    routes: () => (served ? getJSON("/api/routes") : Promise.resolve(boot.index)).then((x) =>
      x.runs.map((r) => ({ id: r.id, slug: r.slug === undefined ? String(r.id) : r.slug, name: r.name }))),
    run: (i) => (served ? getJSON(`/api/run/${i}`) : Promise.resolve(boot.runs[String(i)])),
    task: (i, t) =>
      served
        ? getJSON(`/api/run/${i}/task?id=${encodeURIComponent(t)}`)
        : Promise.resolve(exportTask(i, t)),
    intervals: (i) => getJSON(`/api/run/${i}/intervals`),
    // The ids of the runs that have task t (finished or still running).
    taskRuns: (t) =>
      served
        ? getJSON(`/api/task-runs?id=${encodeURIComponent(t)}`).then((r) => r.runs)
        : Promise.resolve(Object.keys(boot.runs).filter((k) => t in boot.runs[k].task_blocks).map(Number)),
    compare: (i, j) =>
      served
        ? getJSON(`/api/compare/${i}/${j}`)
        : Promise.resolve(boot.comparisons[`${i}/${j}`] || null),
    search: (i, q) =>
      served
        ? getJSON(`/api/run/${i}/search?q=${encodeURIComponent(q)}`).then((r) => r.task_ids)
        : Promise.resolve(exportSearch(i, q)),
  };
  const searchText = {};
  function exportSearch(runId, q) {
    const run = boot.runs[String(runId)];
    const needle = q.toLowerCase();
    return Object.keys(run.task_blocks).filter((tid) => {
      if (tid.toLowerCase().includes(needle)) return true;
      const key = `${runId}/${tid}`;
      if (!(key in searchText)) {
        const task = exportTask(runId, tid);
        searchText[key] = task.trials
          .map((t) =>
            [
              t.candidate,
              t.reflection,
              t.error,
              t.trajectory,
              (t.transcript || []).map((s) => s.text).join("\n"),
              t.self_test && t.self_test.text,
              t.hidden && t.hidden.detail,
            ]
              .filter(Boolean)
              .join("\n"),
          )
          .join("\n")
          .toLowerCase();
      }
      return searchText[key].includes(needle);
    });
  }

  // ------------------------------------------------------------------ helpers
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "dataset") Object.assign(el.dataset, v);
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }
  const NA = "n/a";
  const pct = (x) => (x === null || x === undefined ? NA : `${(100 * x).toFixed(1)}%`);
  function withCI(iv) {
    if (!iv || iv.estimate === null || iv.estimate === undefined) return NA;
    if (iv.low === undefined) return pct(iv.estimate);
    return `${pct(iv.estimate)} [${(100 * iv.low).toFixed(1)}, ${(100 * iv.high).toFixed(1)}]`;
  }
  const num = (x, d = 0) =>
    x === null || x === undefined ? NA : Number(x).toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  const money = (x) => (x === null || x === undefined ? NA : `$${Number(x).toFixed(4)}`);
  function verdictText(v) {
    return v === true ? "pass" : v === false ? "fail" : "unknown";
  }
  // "of N planned" where the run's session planned more tasks than have finished.
  const planned = (r) => (typeof r.planned === "number" && r.planned > r.n_tasks ? ` of ${num(r.planned)} planned` : "");
  function badge(v, label) {
    return h("span", { class: `verdict ${verdictText(v)}` }, label ? `${label}: ${verdictText(v)}` : verdictText(v));
  }
  // Stable URLs: a run by its folder name (its slug: parent/name when two viewed runs
  // share a name), a task by its URL-encoded id. Old `#/run/<index>` URLs redirect.
  let routes = [];
  const slugOf = (i) => (routes[i] ? routes[i].slug : String(i));
  const runHref = (i) => `#/run/${encodeURIComponent(slugOf(i))}`;
  const taskHref = (i, t) => `${runHref(i)}/task/${encodeURIComponent(t)}`;
  // One task in two runs side by side: `#/run/<A>/task/<id>/vs/<B>`.
  const taskVsHref = (i, t, j) => `${taskHref(i, t)}/vs/${encodeURIComponent(slugOf(j))}`;
  const compareHref = (i, j) => `#/compare/${encodeURIComponent(slugOf(i))}/${encodeURIComponent(slugOf(j))}`;
  // Task ids in natural order: HumanEval/2 before HumanEval/10.
  const collator = new Intl.Collator("en", { numeric: true });
  const natural = (a, b) => collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
  function setCrumbs(...items) {
    crumbs.replaceChildren(...items.flatMap((x) => [" / ", x]));
  }
  function ready(name) {
    // Lay the page out before the mark, so "ready" means rendered, not only built.
    void main.offsetHeight;
    document.body.dataset.rbReady = name;
    window.rbReadyAt = performance.now();
  }
  function table(id, head, rows) {
    return h(
      "table",
      { id },
      h("thead", {}, h("tr", {}, head.map((c) => h("th", {}, c)))),
      h("tbody", {}, rows),
    );
  }
  function autoRefresh(active, token) {
    clearTimeout(refreshTimer);
    // A live run: re-read the log every few seconds while tasks are still running.
    if (served && active) {
      statusEl.textContent = "live: refreshing every 5 s";
      refreshTimer = setTimeout(() => token === renderToken && route(true), 5000);
    } else statusEl.textContent = "";
  }

  // The intervals are the slow part of a run's numbers: a served page shows
  // the estimates at once and fills in each interval when the server has it.
  async function fillIntervals(ids, token, onRun) {
    await Promise.all(ids.map(async (i) => {
      const iv = await api.intervals(i);
      if (token !== renderToken) return;
      for (const el of document.querySelectorAll(`[data-iv][data-run="${i}"]`)) {
        el.textContent = withCI(iv[el.dataset.iv]);
      }
      if (onRun) onRun(iv);
    }));
    if (token === renderToken) {
      document.body.dataset.rbIntervals = "1";
      window.rbIntervalsAt = performance.now();
    }
  }
  const ivCell = (run, key, iv) => h("td", { class: "n", dataset: { iv: key, run: String(run) } }, withCI(iv));

  // ------------------------------------------------------------------ sweep page
  async function sweepPage(token) {
    const index = await api.index();
    if (index.runs.length === 1) return runPage(0, token);
    setCrumbs("runs");
    const swept = index.runs.some((r) => r.overrides && r.overrides.length);
    const rows = index.runs.map((r) =>
      h(
        "tr",
        { dataset: { run: String(r.id) } },
        h("td", {}, h("a", { href: runHref(r.id) }, r.name),
          r.job_status && r.job_status !== "done" ? [" ", h("span", { class: `verdict ${r.job_status === "failed" ? "fail" : "running"}` }, r.job_status)] : null),
        swept ? h("td", { class: "overrides" }, (r.overrides || []).join(" ")) : null,
        h("td", {}, r.benchmark), h("td", {}, r.strategy), h("td", {}, r.model),
        h("td", { class: "n" }, r.n_tasks, planned(r), r.running ? ` (+${r.running} running)` : ""),
        ivCell(r.id, "final", r.final),
        ivCell(r.id, "first_try", r.first_try),
        h("td", { class: "n" }, `${num(r.fixes)}/${num(r.breaks)}`),
        h("td", { class: "n" }, num(r.errored_tasks)),
        h("td", { class: "n" }, num(r.per_task_mean && r.per_task_mean.tokens)),
        h("td", { class: "n" }, money(r.totals && r.totals.cost_usd)),
        h("td", {}, r.answer_key || NA, r.imported ? " · imported" : "",
          r.shards ? (r.shards.complete ? ` · ${r.shards.count} shards` : h("span", { class: "warning" }, ` · incomplete: ${r.shards.problems[0]}`)) : ""),
      ),
    );
    const pick = (id) => h("select", { id }, index.runs.map((r) => h("option", { value: r.id }, r.name)));
    const selA = pick("rb-cmp-a");
    const selB = pick("rb-cmp-b");
    if (index.runs.length > 1) selB.value = "1";
    main.replaceChildren(
      h("h1", {}, `${index.runs.length} runs`),
      table(
        "rb-sweep",
        ["run", ...(swept ? ["overrides"] : []), "benchmark", "strategy", "model", "tasks", "final (pass@1) [95% CI]", "first try [95% CI]",
          "fixes/breaks", "errored", "tokens/task", "cost (as run live)", "answer key"],
        rows,
      ),
      h("p", { class: "muted" },
        "final (pass@1) counts an errored task as failed; intervals are 95% Wilson intervals (bootstrap over tasks for means over seeds), as in `reflexion-bench report`; metric names: docs/reports.md#metrics."),
      ...(index.configurations && index.configurations.length ? [
        h("h2", {}, `Configurations over seeds (${index.configurations.length})`),
        table("rb-seeds", ["strategy", "benchmark", "model", "seeds", "tasks", "pass@1 mean ± sd", "pass@1 over tasks [95% CI]",
          "pass^k (every seed)", "pass@k (some seed)", "runs"], index.configurations.map((c) =>
          h("tr", {},
            h("td", {}, c.strategy), h("td", {}, c.benchmark), h("td", {}, c.model),
            h("td", { class: "n" }, `${c.n_seeds} (${c.seeds.join(", ")})`),
            h("td", { class: "n" }, c.n_tasks),
            h("td", { class: "n" }, `${pct(c.pass1_mean)} ± ${c.pass1_sd === null || c.pass1_sd === undefined ? NA : (100 * c.pass1_sd).toFixed(1)}`),
            h("td", { class: "n" }, withCI(c.pass1)),
            h("td", { class: "n" }, withCI(c.pass_hat_k)),
            h("td", { class: "n" }, withCI(c.pass_at_k)),
            h("td", {}, c.run_ids.flatMap((id) => [h("a", { href: runHref(id) }, index.runs[id].name), " "])),
          ))),
        ...index.configurations.filter((c) => c.cannot_differ).map((c) =>
          h("p", { class: "warning" }, `warning: the seeds of ${c.strategy} (${c.benchmark} / ${c.model}) cannot differ: ${c.cannot_differ}; their spread is 0 by construction.`)),
        h("p", { class: "muted" },
          "One row per configuration (runs whose config differs only in the seed); the interval resamples tasks, each task's mean over seeds, as in `reflexion-bench report`'s seeds table."),
      ] : []),
      ...(index.jobs_without_log && index.jobs_without_log.length ? [
        h("h2", {}, `Sweep jobs without a run log (${index.jobs_without_log.length})`),
        table("rb-jobs", ["job folder", "status", "overrides", "error"], index.jobs_without_log.map((j) =>
          h("tr", {}, h("td", {}, j.job_dir), h("td", {}, j.status || NA), h("td", { class: "overrides" }, j.overrides.join(" ")), h("td", {}, pre("error", j.error || ""))))),
      ] : []),
      ...overlaySection(index),
      h("h2", {}, "Compare two runs task by task"),
      h("p", {}, selA, " vs ", selB, " ",
        h("button", { id: "rb-cmp-go", onclick: () => (location.hash = compareHref(Number(selA.value), Number(selB.value))) }, "compare")),
    );
    ready("sweep");
    autoRefresh(index.runs.some((r) => r.running || r.job_status === "running") ||
      (index.jobs_without_log || []).some((j) => j.status === "running"), token);
    const todo = index.runs.filter((r) => !r.intervals).map((r) => r.id);
    if (todo.length) await fillIntervals(todo, token);
    else document.body.dataset.rbIntervals = "1";
  }

  // ------------------------------------------------------------------ curve overlay
  // Chosen runs' success@trial curves on one chart, one series per run, each with the
  // colour and marker the report's figures give series i (analysis/plots.py PALETTE and
  // MARKERS, sent by the server as index.series_style), drawn as steps; the legend sits
  // to the right of the plotting area, never over the data.
  const SVGNS = "http://www.w3.org/2000/svg";
  function svgEl(tag, attrs, text) {
    const el = document.createElementNS(SVGNS, tag);
    for (const [a, v] of Object.entries(attrs)) el.setAttribute(a, v);
    if (text !== undefined) el.textContent = text;
    return el;
  }
  // matplotlib marker codes as SVG shapes (radius r around cx, cy).
  function markerShape(m, cx, cy, r, color) {
    const poly = (pts) => svgEl("polygon", { points: pts.map(([a, b]) => `${cx + a * r},${cy + b * r}`).join(" ") });
    const ngon = (n, rot, inner) => {
      const pts = [];
      const steps = inner ? 2 * n : n;
      for (let q = 0; q < steps; q++) {
        const ang = rot + (q * 2 * Math.PI) / steps;
        const rr = inner && q % 2 ? inner : 1;
        pts.push([rr * Math.sin(ang), -rr * Math.cos(ang)]);
      }
      return poly(pts);
    };
    let el;
    switch (m) {
      case "o": el = svgEl("circle", { cx, cy, r }); break;
      case "s": el = poly([[-0.85, -0.85], [0.85, -0.85], [0.85, 0.85], [-0.85, 0.85]]); break;
      case "^": el = poly([[0, -1], [1, 0.8], [-1, 0.8]]); break;
      case "v": el = poly([[0, 1], [1, -0.8], [-1, -0.8]]); break;
      case "<": el = poly([[-1, 0], [0.8, -1], [0.8, 1]]); break;
      case ">": el = poly([[1, 0], [-0.8, -1], [-0.8, 1]]); break;
      case "D": el = poly([[0, -1.1], [0.75, 0], [0, 1.1], [-0.75, 0]]); break;
      case "P": el = poly([[-0.33, -1], [0.33, -1], [0.33, -0.33], [1, -0.33], [1, 0.33], [0.33, 0.33], [0.33, 1], [-0.33, 1], [-0.33, 0.33], [-1, 0.33], [-1, -0.33], [-0.33, -0.33]]); break;
      case "X": el = poly([[-0.7, -1], [0, -0.3], [0.7, -1], [1, -0.7], [0.3, 0], [1, 0.7], [0.7, 1], [0, 0.3], [-0.7, 1], [-1, 0.7], [-0.3, 0], [-1, -0.7]]); break;
      case "*": el = ngon(5, 0, 0.45); break;
      case "h": el = ngon(6, 0); break;
      case "p": el = ngon(5, 0); break;
      default: el = svgEl("circle", { cx, cy, r });
    }
    el.setAttribute("fill", color);
    el.setAttribute("stroke", color);
    el.setAttribute("class", "marker");
    el.dataset.marker = m;
    return el;
  }
  function overlaySVG(runs, style) {
    const k = Math.max(1, ...runs.map((r) => (r.success_at_trial || []).length));
    const W = 640, L = 44, T = 10, B = 30, PW = 400, LEG = 16;
    const H = Math.max(240, T + B + runs.length * LEG + 10);
    const PH = Math.min(H - T - B, 200);
    const svg = svgEl("svg", { id: "rb-overlay", viewBox: `0 0 ${W} ${H}`, width: W, height: H });
    const x = (t) => L + (k <= 1 ? PW / 2 : ((t - 1) * PW) / (k - 1));
    const y = (v) => T + (1 - v) * PH;
    const plot = svgEl("g", { class: "plot" });
    for (const v of [0, 0.25, 0.5, 0.75, 1]) {
      plot.append(svgEl("line", { x1: L, x2: L + PW, y1: y(v), y2: y(v), class: "grid" }));
      plot.append(svgEl("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end", class: "axis" }, `${v * 100}%`));
    }
    for (let t = 1; t <= k; t++) plot.append(svgEl("text", { x: x(t), y: T + PH + 16, "text-anchor": "middle", class: "axis" }, `trial ${t}`));
    svg.append(plot);
    const legend = svgEl("g", { class: "legend", transform: `translate(${L + PW + 24},${T + 4})` });
    runs.forEach((r, n) => {
      const color = style.palette[n % style.palette.length];
      const marker = style.markers[n % style.markers.length];
      const g = svgEl("g", { class: "series" });
      g.dataset.run = String(r.id);
      g.dataset.color = color;
      g.dataset.marker = marker;
      const p = (r.success_at_trial || []).map((iv, q) => [q + 1, iv && iv.estimate]).filter(([, v]) => v !== null && v !== undefined);
      if (p.length) {
        g.append(svgEl("polyline", { class: "line steps", fill: "none", stroke: color,
          points: stepPoints(p.map(([t, v]) => [x(t), y(v)])).map(([a, b]) => `${a},${b}`).join(" ") }));
      }
      for (const [t, v] of p) g.append(markerShape(marker, x(t), y(v), 4, color));
      svg.append(g);
      const item = svgEl("g", { class: "legend-item", transform: `translate(0,${n * LEG})` });
      item.dataset.run = String(r.id);
      item.append(svgEl("line", { x1: 0, x2: 18, y1: 0, y2: 0, stroke: color }), markerShape(marker, 9, 0, 4, color),
        svgEl("text", { x: 24, y: 4, class: "axis" }, r.name));
      legend.append(item);
    });
    svg.append(legend);
    return svg;
  }
  const overlayChosen = {};
  function overlaySection(index) {
    const style = index.series_style || { palette: ["#000000"], markers: ["o"] };
    const runs = index.runs;
    const key = runs.map((r) => r.slug).join("\n");
    if (!overlayChosen[key]) overlayChosen[key] = new Set(runs.slice(0, Math.min(runs.length, style.palette.length)).map((r) => r.id));
    const chosen = overlayChosen[key];
    const box = h("div", { id: "rb-overlay-box" });
    const draw = () => box.replaceChildren(
      overlaySVG(runs.filter((r) => chosen.has(r.id)), style),
      chosen.size > style.palette.length
        ? h("p", { class: "warning" }, `${chosen.size} runs chosen: colours and markers repeat after ${style.palette.length}`) : "");
    const checks = h("div", { id: "rb-overlay-runs" }, runs.map((r) => h("label", {},
      h("input", { type: "checkbox", checked: chosen.has(r.id), dataset: { run: String(r.id) }, onchange: (ev) => {
        if (ev.currentTarget.checked) chosen.add(r.id); else chosen.delete(r.id);
        draw();
      } }), ` ${r.name} `)));
    draw();
    return [
      h("h2", {}, "Curves of chosen runs"),
      checks,
      h("figure", {}, box, h("figcaption", {},
        "success of the submitted candidate after k trials (steps: a task's verdict holds between trials); colours and markers as in the report's figures")),
    ];
  }

  // ------------------------------------------------------------------ run page
  function curveSVG(sub, solved) {
    const W = 380, H = 210, L = 40, R = 28, T = 10, B = 30;
    const k = (sub || []).length;
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("id", "rb-curve");
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.setAttribute("width", W);
    svg.setAttribute("height", H);
    const x = (t) => L + (k <= 1 ? (W - L - R) / 2 : ((t - 1) * (W - L - R)) / (k - 1));
    const y = (v) => T + (1 - v) * (H - T - B);
    const add = (tag, attrs, text) => {
      const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
      for (const [a, v] of Object.entries(attrs)) el.setAttribute(a, v);
      if (text !== undefined) el.textContent = text;
      svg.append(el);
      return el;
    };
    for (const v of [0, 0.25, 0.5, 0.75, 1]) {
      add("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" });
      add("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end", class: "axis" }, `${v * 100}%`);
    }
    for (let t = 1; t <= k; t++) add("text", { x: x(t), y: H - 10, "text-anchor": "middle", class: "axis" }, `trial ${t}`);
    const pts = (series, key) =>
      (series || []).map((iv, i) => [i + 1, iv && iv[key]]).filter(([, v]) => v !== null && v !== undefined);
    const lows = pts(sub, "low"), highs = pts(sub, "high");
    if (lows.length === k && highs.length === k && k > 0) {
      // The band as steps too: the interval holds between trials, like the estimate.
      const hi = stepPoints(highs.map(([t, v]) => [x(t), y(v)]));
      const lo = stepPoints(lows.map(([t, v]) => [x(t), y(v)])).reverse();
      add("polygon", { points: [...hi, ...lo].map(([a, b]) => `${a},${b}`).join(" "), class: "band" });
    }
    for (const [series, cls] of [[solved, "solved"], [sub, "sub"]]) {
      const p = pts(series, "estimate");
      if (p.length) add("polyline", { points: stepPoints(p.map(([t, v]) => [x(t), y(v)])).map(([a, b]) => `${a},${b}`).join(" "), class: `${cls} steps` });
      for (const [t, v] of p) add("circle", { cx: x(t), cy: y(v), r: 3, class: cls });
    }
    return svg;
  }
  // A trial curve drawn as steps, as the report draws success@trial: a task's verdict
  // holds between trials, so the value at trial t stays flat until trial t+1, then
  // rises (a vertical segment), never a slope between two trials.
  function stepPoints(xy) {
    const out = [];
    xy.forEach(([a, b], n) => {
      if (n > 0) out.push([a, xy[n - 1][1]]);
      out.push([a, b]);
    });
    return out;
  }

  const FILTERS = {
    all: () => true,
    passed: (t) => t.final === true,
    failed: (t) => t.final === false,
    errored: (t) => t.errored,
    fixed: (t) => t.fixed,
    broken: (t) => t.broken,
    self_fp: (t) => t.self_fp,
    in_progress: (t) => t.in_progress,
  };
  const FILTER_LABELS = {
    all: "all", passed: "passed", failed: "failed", errored: "errored", fixed: "fixed",
    broken: "broken", self_fp: "self-test false positive", in_progress: "running",
  };
  const runState = {};
  // The task table's columns: [sort key or null, header].
  const SORTS = [["id", "task"], [null, "hidden verdict per trial"], ["verdict", "final"], [null, "flags"],
    [null, "reflections"], ["fixes", "fixes/breaks"], ["tokens", "tokens"]];
  const verdictRank = (tk) => (tk.in_progress ? -1 : tk.final === true ? 2 : tk.final === false ? 1 : 0);
  const SORT_KEYS = {
    verdict: verdictRank,
    fixes: (tk) => (tk.n_fixes ?? -1) * 1e6 + (tk.n_breaks ?? 0),
    tokens: (tk) => tk.tokens ?? -1,
  };
  function sortTasks(tasks, key, dir) {
    const val = SORT_KEYS[key];
    return [...tasks].sort((a, b) =>
      (val ? dir * (val(a) - val(b)) : 0) || (val ? natural(a.id, b.id) : dir * natural(a.id, b.id)));
  }
  function filesSection(run) {
    const files = run.files || {};
    return h("div", { id: "rb-files" }, Object.entries(files).length ? Object.entries(files).map(([name, text]) =>
      h("details", { class: "file", dataset: { file: name }, open: true },
        h("summary", {}, name),
        text === null || text === undefined ? h("p", { class: "muted" }, `no ${name} in the run folder`) : pre("file-text", text)))
      : h("p", { class: "muted" }, "not available"));
  }
  function describeMissing(m) {
    if (!m) return "see import.json";
    if (typeof m !== "object") return String(m);
    return Object.entries(m)
      .map(([k, v]) => `${k.replaceAll("_", " ")}: ${Array.isArray(v) ? v.join(", ") : v}`)
      .join("; ");
  }

  async function runPage(i, token) {
    const run = await api.run(i);
    if (!run) throw new Error(`no run ${i}`);
    setCrumbs(h("a", { href: runHref(i) }, run.name));
    const st = (runState[i] = runState[i] || { filter: "all", query: "", matches: null, sort: "id", dir: 1 });
    const s = run.summary || {};
    const c = s.self_test_confusion || {};
    const ff = s.first_to_final || {};
    const t = s.totals || {};
    const pt = s.per_task_mean || {};
    const rows = [
      ["tasks", `${num(run.n_tasks)}${planned(run)}${run.running ? ` (+${run.running} still running, not counted)` : ""}`],
      ["final (pass@1) [95% CI]", ["final", run.final]],
      // The study's headline where the run had a budget: what the report's strategies
      // table reads (each task's last trial paid for within it), not pass@1 as ended.
      ...(run.at_budget ? [[`pass@1 at budget (${num(run.at_budget.budget)} ${run.at_budget.axis}/task)`,
        h("span", { id: "rb-at-budget" }, pct(run.at_budget.pass_at_budget))]] : []),
      ["pass@1 over finished tasks", ["final_finished", run.final_finished]],
      ["first try [95% CI]", ["first_try", run.first_try]],
      ["fixes / breaks between trials", `${num(s.fixes)} / ${num(s.breaks)}`],
      ["fixed / broken from trial 1", `${num(ff.fixed)} / ${num(ff.broken)}${ff.unknown ? ` (${ff.unknown} unknown)` : ""}`],
      ["errored tasks", num(s.errored_tasks)],
      ["self-test TP / FP / FN / TN", run.self_tests_logged === 0
        ? h("span", { id: "rb-self-confusion" }, `${NA} / ${NA} / ${NA} / ${NA} (no self-test results in the log)`)
        : `${num(c.tp)} / ${num(c.fp)} / ${num(c.fn)} / ${num(c.tn)} (stopped on a wrong pass: ${num(c.final_fp)})`],
      ["model calls / tokens (as run live)", `${num(t.model_calls)} / ${num(t.tokens)}`],
      ["cost as run live / paid now", `${money(t.cost_usd)} / ${money(t.paid_cost_usd)}`],
      ["per task: trials / tokens / wall time", `${num(pt.trials, 2)} / ${num(pt.tokens)} / ${num(pt.wall_time_s, 1)} s`],
      ["answer key", run.answer_key || NA],
    ];
    if (s.logged) rows.push(["as logged (imported)", `final ${pct(s.logged.final)}, re-scored agrees on ${pct(s.logged.rescored_agreement)}`]);
    if (s.missing) rows.push(["missing in the log", describeMissing(s.missing)]);
    if (run.shards) rows.push(["shards", run.shards.complete
      ? `${run.shards.count} shards, all present and finished`
      : h("span", { class: "warning", id: "rb-shards" }, `INCOMPLETE: ${run.shards.problems.join("; ")}`)]);
    const summary = h("table", { id: "rb-summary", class: "kv" },
      h("tbody", {}, rows.map(([k, v]) => h("tr", {}, h("th", {}, k), Array.isArray(v) ? ivCell(i, v[0], v[1]) : h("td", {}, v)))));

    const tbody = h("tbody", {});
    const counter = h("span", { id: "rb-count" });
    const heads = h("tr", {}, SORTS.map(([key, label]) => key
      ? h("th", { class: "sortable", dataset: { sort: key }, title: `sort by ${label}`, onclick: () => {
        if (st.sort === key) st.dir = -st.dir; else { st.sort = key; st.dir = 1; }
        renderRows();
      } }, label, h("span", { class: "arrow" }))
      : h("th", {}, label)));
    function renderRows() {
      const keep = FILTERS[st.filter];
      const sorted = sortTasks(run.tasks, st.sort, st.dir);
      st.order = sorted.map((tk) => tk.id);
      for (const th of heads.querySelectorAll("th[data-sort]")) {
        const on = th.dataset.sort === st.sort;
        th.setAttribute("aria-sort", on ? (st.dir > 0 ? "ascending" : "descending") : "none");
        th.querySelector(".arrow").textContent = on ? (st.dir > 0 ? " ▲" : " ▼") : "";
      }
      const shown = sorted.filter((tk) => keep(tk) && (st.matches === null || st.matches.has(tk.id)));
      counter.textContent = `${shown.length} of ${run.tasks.length} tasks`;
      tbody.replaceChildren(
        ...shown.map((tk) =>
          h("tr", { dataset: { task: tk.id } },
            h("td", {}, h("a", { href: taskHref(i, tk.id) }, tk.id)),
            h("td", { class: "chips" }, tk.verdicts.map((v, n) =>
              h("span", { class: `chip ${verdictText(v)}`, title: `trial ${tk.trials[n]}: hidden ${verdictText(v)}, self-tests ${verdictText(tk.self[n])}` },
                v === true ? "✓" : v === false ? "✗" : "?"))),
            h("td", {}, tk.in_progress ? h("span", { class: "verdict running" }, "running") : badge(tk.final)),
            h("td", {}, [tk.errored && "errored", tk.fixed && "fixed", tk.broken && "broken", tk.self_fp && "self-test FP"].filter(Boolean).join(", ")),
            h("td", { class: "n" }, tk.reflections),
            h("td", { class: "n" }, `${num(tk.n_fixes)}/${num(tk.n_breaks)}`),
            h("td", { class: "n" }, num(tk.tokens)),
          ),
        ),
      );
    }
    const filterBar = h("div", { id: "rb-filters" },
      Object.keys(FILTERS).map((f) => {
        const n = run.tasks.filter(FILTERS[f]).length;
        return h("button", {
          class: f === st.filter ? "on" : "", dataset: { filter: f },
          onclick: (ev) => {
            st.filter = f;
            for (const b of filterBar.querySelectorAll("button")) b.classList.toggle("on", b === ev.currentTarget);
            renderRows();
          },
        }, `${FILTER_LABELS[f]} (${n})`);
      }));
    let timer = null;
    const search = h("input", {
      id: "rb-search", type: "search", placeholder: "search task id or text (candidates, reflections, feedback)", value: st.query,
      oninput: () => {
        clearTimeout(timer);
        timer = setTimeout(async () => {
          st.query = search.value;
          st.matches = st.query.trim() ? new Set(await api.search(i, st.query)) : null;
          renderRows();
          document.body.dataset.rbSearched = st.query;
        }, 200);
      },
    });
    renderRows();
    // Filled in after the page shows: the list of runs needs every run's summary.
    const others = h("p", { id: "rb-others" });
    const curve = curveSVG(run.success_at_trial, run.solved_by_trial);
    const head = h("p", { class: "muted" }, `${run.benchmark} · ${run.strategy} · ${run.model} · ${run.path}`);
    const imported = run.import ? h("p", { class: "note" },
      "Imported log: what it lacks is marked missing, never invented (see import.json). Missing: ",
      describeMissing(run.import.missing)) : null;
    main.replaceChildren(
      h("h1", {}, run.name), head, ...(imported ? [imported] : []),
      h("div", { class: "row" }, summary, h("figure", {}, curve,
        h("figcaption", {}, "success of the submitted candidate after k trials (line, 95% band); solved at any trial (dashed)"))),
      others,
      h("h2", {}, "Tasks"), filterBar, h("p", {}, search, " ", counter),
      h("table", { id: "rb-tasks" },
        h("thead", {}, heads),
        tbody),
      h("h2", { id: "rb-files-title" }, "Config & provenance"),
      filesSection(run),
    );
    if (st.query) search.dispatchEvent(new Event("input"));
    ready("run");
    autoRefresh(run.running > 0, token);
    api.index().then((idx) => {
      if (token !== renderToken || idx.runs.length < 2) return;
      // Only runs of the same benchmark: a paired comparison needs the same tasks.
      const rest = idx.runs.filter((r) => r.id !== i);
      const same = rest.filter((r) => r.benchmark === run.benchmark);
      const skipped = rest.length - same.length;
      others.replaceChildren(
        same.length ? h("span", { id: "rb-compare-with" }, "Compare with: ",
          ...same.flatMap((r) => [h("a", { href: compareHref(i, r.id), dataset: { run: String(r.id) } }, r.name), " "]))
          : h("span", { class: "muted" }, `No other run of ${run.benchmark} to compare with.`),
        skipped ? h("span", { class: "muted", id: "rb-compare-skipped" },
          ` ${skipped} run${skipped === 1 ? "" : "s"} of other benchmarks ${skipped === 1 ? "is" : "are"} not offered: a paired comparison needs the same tasks.`) : "");
    });
    if (run.intervals) document.body.dataset.rbIntervals = "1";
    else await fillIntervals([i], token, (iv) => curve.replaceWith(curveSVG(iv.success_at_trial, iv.solved_by_trial)));
  }

  // ------------------------------------------------------------------ task page
  function pre(cls, text) {
    return h("pre", { class: cls }, text === null || text === undefined ? "" : text);
  }
  function section(title, ...body) {
    return h("section", {}, h("h3", {}, title), ...body);
  }
  const STOPS = {
    "budget.tokens": "budget (tokens)", "budget.usd": "budget (cost)", "budget.calls": "budget (calls)",
    self_test_pass: "its self-tests passed",
  };
  function stopText(tr) {
    const out = [`stop reason: ${STOPS[tr.stop_reason] || tr.stop_reason}`];
    const spent = tr.budget_spent || {}, limit = tr.budget || {};
    const figs = Object.entries(limit).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => {
      const fmt = k === "usd" ? money : (x) => num(x);
      const unit = k === "usd" ? "" : ` ${k}`;
      return `${fmt(spent[k])} of ${fmt(v)}${unit}`;
    });
    if (figs.length) out.push(`, spent ${figs.join(", ")}`);
    return out.join("");
  }
  // A line diff that ignores whitespace (on request): lines compared with runs of
  // whitespace collapsed and ends trimmed, blank lines left out; shown as the new lines.
  const wsNorm = (line) => line.replace(/\s+/g, " ").trim();
  const wsDiff = (prev, cur) => lineDiff(prev, cur, true);
  // A longest-common-subsequence line diff as [op, line] rows; `ws` ignores whitespace.
  function lineDiff(prev, cur, ws) {
    const a = String(prev).split("\n").filter((l) => !ws || wsNorm(l) !== "");
    const b = String(cur).split("\n").filter((l) => !ws || wsNorm(l) !== "");
    const na = ws ? a.map(wsNorm) : a, nb = ws ? b.map(wsNorm) : b;
    const L = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
    for (let p = a.length - 1; p >= 0; p--) for (let q = b.length - 1; q >= 0; q--) {
      L[p][q] = na[p] === nb[q] ? L[p + 1][q + 1] + 1 : Math.max(L[p + 1][q], L[p][q + 1]);
    }
    const rows = [];
    let p = 0, q = 0;
    while (p < a.length && q < b.length) {
      if (na[p] === nb[q]) { rows.push([" ", b[q]]); p++; q++; }
      else if (L[p + 1][q] >= L[p][q + 1]) rows.push(["-", a[p++]]);
      else rows.push(["+", b[q++]]);
    }
    while (p < a.length) rows.push(["-", a[p++]]);
    while (q < b.length) rows.push(["+", b[q++]]);
    return rows;
  }
  const taskOpts = { ignoreWS: false };
  // What a trial's diff compares: an episode's actions (ALFWorld, HotpotQA) or the code.
  const diffText = (tr) => (tr.diff_of === "episode" ? tr.episode : tr.candidate);
  function diffSection(tr, prev) {
    const a = prev ? diffText(prev) : null, b = diffText(tr);
    const ws = taskOpts.ignoreWS && a !== null && a !== undefined && b !== null && b !== undefined;
    const rows = ws ? wsDiff(a, b) : tr.diff;
    const changed = rows.some(([op]) => op !== " ");
    const what = tr.diff_of === "episode" ? `Episode diff to trial ${tr.trial - 1} (actions and thoughts)` : `Diff to trial ${tr.trial - 1}`;
    return h("section", { class: "diff-section" }, h("h3", {}, what, ws ? " (whitespace ignored)" : ""),
      changed ? h("div", { class: "diff" }, rows.map(([op, line]) =>
        h("div", { class: op === "+" ? "add" : op === "-" ? "del" : "ctx" }, `${op} ${line}`)))
        : h("p", { class: "muted no-change" }, ws ? "no change but whitespace" : "identical to the previous trial"));
  }
  function trialColumn(tr, bench, prev) {
    const parts = [
      h("h2", {}, `Trial ${tr.trial}`, tr.final ? " (submitted)" : "", " ", badge(tr.verdict, tr.score_label || "hidden")),
    ];
    const facts = [];
    if (tr.temperature !== null && tr.temperature !== undefined) {
      facts.push(h("span", { class: "temperature" }, `temperature ${tr.temperature}`));
    }
    if (tr.stop_reason) facts.push(h("span", { class: "stop" }, stopText(tr)));
    if (facts.length) parts.push(h("p", { class: "facts" }, facts.flatMap((f, n) => (n ? [" · ", f] : [f]))));
    if (tr.prompt && tr.prompt.length) {
      parts.push(h("details", { class: "prompt" },
        h("summary", {}, `Actor prompt (${tr.prompt.length} message${tr.prompt.length === 1 ? "" : "s"}: ${tr.prompt.map((m) => m.role).join(", ")})`),
        tr.prompt.map((m) => h("div", { class: `msg ${m.role}` }, h("span", { class: "role" }, m.role), pre("msg-text", m.content)))));
    }
    if (tr.error) parts.push(section("Error", pre("error", tr.error)));
    if (tr.stopped) parts.push(section("Stopped", pre("error", tr.stopped)));
    if (tr.transcript) {
      parts.push(section(bench === "alfworld" ? "Episode" : "Trajectory",
        h("div", { class: "transcript" }, tr.transcript.map((s) => h("div", { class: `step ${s.kind}` }, h("span", { class: "kind" }, s.kind), s.text)))));
    }
    const ex = tr.extraction;
    if (ex && ex.placeholder) {
      parts.push(section("Extraction",
        h("p", { class: "extraction placeholder" }, h("strong", {}, "extraction outcome: "), h("span", { class: "outcome" }, ex.outcome)),
        h("p", { class: "note" }, "The candidate below is a placeholder the harness inserted (it raises NotImplementedError); the model's raw reply:"),
        pre("raw-reply", tr.raw_reply || ""),
        ex.notes.length > 1 ? h("p", { class: "muted" }, `notes: ${ex.notes.join("; ")}`) : null));
    } else if (ex && ex.method) {
      parts.push(h("p", { class: "muted extraction" }, `extraction: ${ex.method}`, ex.notes.length ? ` (${ex.notes.join("; ")})` : ""));
    }
    if (tr.candidate !== null && tr.candidate !== undefined) {
      parts.push(section(tr.transcript ? "Answer" : "Candidate", pre("candidate", tr.candidate)));
    } else parts.push(section("Candidate", h("p", { class: "muted" }, "not in the log")));
    if (tr.diff) parts.push(diffSection(tr, prev));
    if (tr.self_test) {
      const st = tr.self_test;
      const body = [badge(st.passed, tr.in_loop_label || "self-tests")];
      if (st.results.length) {
        body.push(table(null, ["test", "verdict", "output"], st.results.map((r) =>
          h("tr", { class: `test ${r.status}` }, h("td", {}, pre("", r.test)), h("td", {}, h("span", { class: `verdict ${r.status === "pass" ? "pass" : "fail"}` }, r.status)), h("td", {}, pre("", r.output))))));
      }
      if (st.text) body.push(pre("feedback", st.text));
      if (st.generated) body.push(h("details", {}, h("summary", {}, "generated tests (raw)"), pre("", st.generated)));
      parts.push(section(tr.in_loop_title || "Self-tests (in the loop)", ...body));
    }
    if (tr.hidden) {
      parts.push(section(tr.score_title || "Hidden tests (never shown to the loop)",
        badge(tr.hidden.passed, tr.score_label || "hidden"), ` status: ${tr.hidden.status || NA}`,
        tr.logged_verdict !== null && tr.logged_verdict !== undefined ? ` · logged verdict: ${verdictText(tr.logged_verdict)}` : "",
        tr.hidden.detail ? pre("hidden-detail", tr.hidden.detail) : null));
    }
    parts.push(section("Reflection", tr.reflection ? h("blockquote", { class: "reflection" }, tr.reflection) : h("p", { class: "muted" }, "none")));
    if (tr.memory_shown && tr.memory_shown.length) {
      parts.push(section("Memory shown to this trial", h("ol", { class: "memory" }, tr.memory_shown.map((m) => h("li", {}, m)))));
    }
    if (tr.calls) {
      // One line per role first; the call-by-call table is folded (ALFWorld: ~50 calls).
      const roles = {};
      for (const c of tr.calls) {
        const r = (roles[c.role] = roles[c.role] || { n: 0, tin: 0, tout: 0, lat: 0, cost: 0, cached: 0 });
        r.n += 1; r.tin += c.prompt_tokens || 0; r.tout += c.completion_tokens || 0;
        r.lat += c.latency_s || 0; r.cost += c.cost_usd || 0; r.cached += c.cached ? 1 : 0;
      }
      // The temperature sent with each call, where the log has it (newer logs).
      const temps = tr.calls.some((c) => c.temperature !== null && c.temperature !== undefined);
      const byRole = h("ul", { class: "roles" }, Object.entries(roles).map(([role, r]) =>
        h("li", {}, `${role}: ${r.n} call(s), ${num(r.tin)}/${num(r.tout)} tokens, ${num(r.lat, 2)} s, ${money(r.cost)}, ${r.cached} cached`)));
      parts.push(section(`Model calls (${tr.calls.length})`, byRole, h("details", { open: tr.calls.length <= 8 }, h("summary", {}, "each call"), table(null, ["role", "tokens in/out", "finish reason", "retries", ...(temps ? ["temperature"] : []), "latency", "cost", "cached"],
        tr.calls.map((c) => h("tr", { class: c.error ? "call error" : "call" }, h("td", {}, c.role, c.error ? ` (error: ${c.error})` : ""),
          h("td", { class: "n" }, `${num(c.prompt_tokens)}/${num(c.completion_tokens)}`),
          h("td", { class: "finish" }, c.finish_reason || NA), h("td", { class: "n" }, num(c.retries)),
          temps ? h("td", { class: "n" }, c.temperature ?? NA) : null,
          h("td", { class: "n" }, `${num(c.latency_s, 2)} s`),
          h("td", { class: "n" }, money(c.cost_usd)), h("td", {}, c.cached ? "yes" : "no")))),
        // Each call's request and reply, every role (logs written since every call is
        // logged in full); folded, but in the page from the start.
        tr.calls.map((c, n) => c.messages ? h("details", { class: "call-io", dataset: { role: c.role } },
          h("summary", {}, `call ${n + 1} (${c.role}): request and reply`,
            c.messages_chars ? ` (cut: ${num(c.messages_chars)} characters in full)` : ""),
          c.messages.map((m) => h("div", { class: "msg" }, h("div", { class: "role" }, m.role), pre("", m.content))),
          c.reply !== null && c.reply !== undefined
            ? h("div", { class: "msg reply" }, h("div", { class: "role" }, "reply"), pre("", c.reply))
            : h("p", { class: "muted" }, "no reply (the call failed)")) : null))));
    } else parts.push(section("Model calls", h("p", { class: "muted" }, "not in the log")));
    if (tr.trajectory && !tr.transcript && tr.trajectory !== tr.candidate && !(ex && ex.placeholder)) {
      parts.push(h("details", {}, h("summary", {}, "raw completion"), pre("", tr.trajectory)));
    }
    if (tr.missing && tr.missing.length) parts.push(h("p", { class: "note" }, `missing in the log: ${tr.missing.join(", ")}`));
    return h("article", { class: "trial", dataset: { trial: String(tr.trial) } }, parts);
  }

  async function taskPage(i, taskId, token) {
    const [run, task] = await Promise.all([served ? Promise.resolve(null) : api.run(i), api.task(i, taskId)]);
    if (!task) {
      main.replaceChildren(h("p", { class: "error" }, `no task ${taskId} in this run`));
      return;
    }
    const name = routes[i] ? routes[i].name : run ? run.name : (await api.index()).runs[i].name;
    setCrumbs(h("a", { href: runHref(i) }, name), h("span", {}, taskId));
    const nav = h("nav", { id: "rb-task-nav" });
    // Trial strip: one cell per trial (its number and hidden verdict); clicking two cells
    // shows those two trials side by side instead of every column (the default from six
    // trials on: the last two), so any number of trials fits without horizontal scroll.
    const n = task.trials.length;
    const key = `${i}/${taskId}`;
    if (!taskOpts.pairFor || taskOpts.pairFor !== key) {
      taskOpts.pairFor = key;
      taskOpts.pair = n >= 6 ? task.trials.slice(-2).map((tr) => tr.trial) : [];
    }
    const trialsBox = h("div", { class: "trials" });
    const strip = h("div", { id: "rb-strip" });
    const wsBox = h("input", { type: "checkbox", id: "rb-ignore-ws", checked: taskOpts.ignoreWS, onchange: (ev) => {
      taskOpts.ignoreWS = ev.currentTarget.checked;
      drawTrials();
    } });
    function drawTrials() {
      const pair = taskOpts.pair;
      const showing = pair.length === 2;
      strip.replaceChildren(h("span", { class: "muted" }, "trials: "),
        ...task.trials.map((tr) => h("button", {
          class: `cell ${verdictText(tr.verdict)}${pair.includes(tr.trial) ? " chosen" : ""}`,
          dataset: { trial: String(tr.trial) }, title: `trial ${tr.trial}: hidden ${verdictText(tr.verdict)}${tr.final ? " (submitted)" : ""}`,
          onclick: () => {
            const p = taskOpts.pair.filter((t) => t !== tr.trial);
            if (p.length === taskOpts.pair.length) p.push(tr.trial);
            taskOpts.pair = p.slice(-2).sort((a, b) => a - b);
            drawTrials();
          } }, h("span", { class: "mark" }, tr.verdict === true ? "✓" : tr.verdict === false ? "✗" : "?"), h("span", { class: "num" }, String(tr.trial)))),
        " ", h("button", { id: "rb-show-all", disabled: !pair.length, onclick: () => { taskOpts.pair = []; drawTrials(); } }, "show all trials"),
        h("span", { class: "muted", id: "rb-strip-note" }, showing ? ` showing trials ${pair[0]} and ${pair[1]} side by side` : pair.length === 1 ? ` trial ${pair[0]} chosen: click another to compare` : " click two trials to show them side by side"));
      trialsBox.classList.toggle("pair", showing);
      trialsBox.replaceChildren(...task.trials.map((tr, q) => {
        const col = trialColumn(tr, task.benchmark, q ? task.trials[q - 1] : null);
        if (showing && !pair.includes(tr.trial)) col.classList.add("off");
        return col;
      }));
      document.body.dataset.rbPair = pair.join(",");
    }
    drawTrials();
    // The same task in another run of this benchmark, side by side: offered for the runs
    // of the same benchmark that have the task; the others are counted, and why said.
    const vs = h("p", { id: "rb-task-vs" });
    Promise.all([api.index(), api.taskRuns(taskId)]).then(([idx, having]) => {
      if (token !== renderToken) return;
      const bench = idx.runs[i] ? idx.runs[i].benchmark : task.benchmark;
      const has = new Set(having);
      const rest = idx.runs.filter((r) => r.id !== i);
      const same = rest.filter((r) => r.benchmark === bench);
      const offered = same.filter((r) => has.has(r.id));
      const without = same.length - offered.length, other = rest.length - same.length;
      const runs = (n, of) => `${n} run${n === 1 ? "" : "s"} of ${of} ${n === 1 ? "is" : "are"} not offered`;
      const why = [];
      if (without) why.push(`${runs(without, bench)}: ${without === 1 ? "it does" : "they do"} not have this task`);
      if (other) why.push(`${runs(other, "other benchmarks")}: they have other tasks`);
      vs.replaceChildren(
        offered.length ? h("span", {}, "This task in another run, side by side: ",
          ...offered.flatMap((r) => [h("a", { href: taskVsHref(i, taskId, r.id), dataset: { run: String(r.id) } }, r.name), " "]))
          : rest.length ? h("span", { class: "muted" }, `No other run of ${bench} has this task to put beside this one.`) : "",
        why.length ? h("span", { class: "muted", id: "rb-task-vs-skipped" }, ` ${why.join("; ")}.`) : "");
    });
    main.replaceChildren(
      nav,
      h("h1", { id: "rb-task-id" }, taskId),
      vs,
      h("p", { class: "muted" }, `${task.trials.length} trial(s) · `,
        task.in_progress ? "still running" : ["submitted: ", badge(task.row.final)],
        task.row.self_fp ? " · a self-test false positive" : ""),
      strip,
      h("p", { class: "options" }, h("label", {}, wsBox, " ignore whitespace in diffs")),
      trialsBox,
    );
    ready("task");
    autoRefresh(task.in_progress, token);
    // Previous / next task: in the order the run page last showed (natural by id).
    let full = run;
    try {
      full = full || (await api.run(i));
    } catch (err) {
      nav.replaceChildren(h("span", { class: "error" }, `previous/next unavailable: ${err.message || err}`));
      return;
    }
    if (token !== renderToken) return;
    const st = runState[i];
    const order = st && st.order && st.order.length === full.tasks.length
      ? st.order : sortTasks(full.tasks, "id", 1).map((tk) => tk.id);
    const k = order.indexOf(taskId);
    const link = (t, cls, label) => (t === undefined
      ? h("span", { class: `muted ${cls}` }, label)
      : h("a", { class: cls, href: taskHref(i, t), dataset: { task: t } }, `${label}: ${t}`));
    nav.replaceChildren(
      link(k > 0 ? order[k - 1] : undefined, "prev", "← previous"), " · ",
      h("span", { class: "pos" }, k >= 0 ? `task ${k + 1} of ${order.length}` : "not in the run's table"), " · ",
      link(k >= 0 && k + 1 < order.length ? order[k + 1] : undefined, "next", "next →"),
      st && st.sort && st.sort !== "id" ? h("span", { class: "muted" }, ` (sorted by ${st.sort})`) : "");
    document.body.dataset.rbNav = taskId;
  }

  // ------------------------------------------------------------------ one task, two runs
  // The task's trials in run A and run B side by side: each run's verdict strip (click a
  // trial to choose it), its facts, the two submitted answers' diff, and any trial of A
  // beside any trial of B (the submitted ones first), so any number of trials fits.
  const pairOpts = { key: null, a: null, b: null };
  async function taskPairPage(i, j, taskId, token) {
    const [idx, ta, tb] = await Promise.all([api.index(), api.task(i, taskId).catch(() => null), api.task(j, taskId).catch(() => null)]);
    if (token !== renderToken) return;
    const ra = idx.runs[i], rb = idx.runs[j];
    setCrumbs(h("a", { href: runHref(i) }, ra.name), h("a", { href: taskHref(i, taskId) }, taskId), h("span", {}, `vs ${rb.name}`));
    const head = [h("h1", { id: "rb-task-id" }, taskId),
      h("p", { class: "muted" }, "A: ", h("a", { href: taskHref(i, taskId) }, ra.name), ` (${ra.strategy} · ${ra.model}) · B: `,
        h("a", { href: runHref(j) }, rb.name), ` (${rb.strategy} · ${rb.model})`)];
    if (!ta || !tb) {
      const missing = !ta ? ra : rb;
      main.replaceChildren(...head, h("p", { class: "error", id: "rb-pair-missing" },
        `${taskId} is not in run ${missing.name} (${missing.n_tasks} tasks${missing.benchmark !== ra.benchmark ? `, benchmark ${missing.benchmark}` : ""}): nothing to put beside it.`,
        ta || tb ? [" ", h("a", { href: taskHref(ta ? i : j, taskId) }, `Open it in ${(ta ? ra : rb).name} alone`), "."] : ""));
      ready("pair");
      return;
    }
    const key = `${i}/${j}/${taskId}`;
    const submitted = (t) => (t.trials.find((tr) => tr.final) || t.trials[t.trials.length - 1]).trial;
    if (pairOpts.key !== key) Object.assign(pairOpts, { key, a: submitted(ta), b: submitted(tb) });
    const wsBox = h("input", { type: "checkbox", id: "rb-ignore-ws", checked: taskOpts.ignoreWS, onchange: (ev) => {
      taskOpts.ignoreWS = ev.currentTarget.checked;
      draw();
    } });
    const box = h("div", { id: "rb-pair" });
    const facts = (run, t) => {
      const row = t.row;
      return h("ul", { class: "pair-facts" },
        h("li", { class: "pair-config" }, `${run.strategy} · ${run.model}`),
        h("li", {}, "first try: ", badge(row.verdicts[0]), " · submitted: ", t.in_progress ? "still running" : badge(row.final)),
        h("li", {}, `${row.trials.length} trial(s), ${row.n_fixes} fix(es), ${row.n_breaks} break(s), ${row.reflections} reflection(s)`),
        h("li", {}, `tokens: ${row.tokens === null || row.tokens === undefined ? NA : num(row.tokens)}`));
    };
    const strip = (side, t) => h("div", { class: "pair-strip", dataset: { side } },
      ...t.trials.map((tr) => h("button", {
        class: `cell ${verdictText(tr.verdict)}${pairOpts[side] === tr.trial ? " chosen" : ""}`,
        dataset: { trial: String(tr.trial) }, title: `trial ${tr.trial}: ${verdictText(tr.verdict)}${tr.final ? " (submitted)" : ""}`,
        onclick: () => { pairOpts[side] = tr.trial; draw(); },
      }, h("span", { class: "mark" }, tr.verdict === true ? "✓" : tr.verdict === false ? "✗" : "?"), h("span", { class: "num" }, String(tr.trial)))));
    const answer = (tr) => (tr.diff_of === "episode" ? tr.episode : tr.candidate);
    const labelled = (side, run, col) => {
      col.prepend(h("p", { class: "pair-label muted" }, `${side}: ${run.name}`));
      col.dataset.side = side.toLowerCase();
      return col;
    };
    function draw() {
      const trA = ta.trials.find((tr) => tr.trial === pairOpts.a), trB = tb.trials.find((tr) => tr.trial === pairOpts.b);
      const xa = answer(trA), xb = answer(trB);
      let diff;
      if (xa === null || xa === undefined || xb === null || xb === undefined) {
        diff = h("p", { class: "muted" }, "one of the two trials has no answer in its log");
      } else {
        const rows = lineDiff(xa, xb, taskOpts.ignoreWS);
        diff = rows.some(([op]) => op !== " ")
          ? h("div", { class: "diff", id: "rb-pair-diff" }, rows.map(([op, line]) =>
            h("div", { class: op === "+" ? "add" : op === "-" ? "del" : "ctx" }, `${op} ${line}`)))
          : h("p", { class: "muted no-change", id: "rb-pair-diff" }, taskOpts.ignoreWS ? "no difference but whitespace" : "identical");
      }
      const what = trA.diff_of === "episode" ? "episodes (actions and thoughts)" : "programs";
      box.replaceChildren(
        h("div", { class: "trials pair" },
          h("div", { class: "pair-run", dataset: { side: "a" } }, h("h2", {}, "A: ", ra.name), facts(ra, ta), strip("a", ta)),
          h("div", { class: "pair-run", dataset: { side: "b" } }, h("h2", {}, "B: ", rb.name), facts(rb, tb), strip("b", tb))),
        h("section", { class: "diff-section" },
          h("h3", {}, `The ${what} of A's trial ${trA.trial} and B's trial ${trB.trial}`, taskOpts.ignoreWS ? " (whitespace ignored)" : ""),
          h("p", { class: "muted pair-legend" }, `- only in A (${ra.name}, trial ${trA.trial}) · + only in B (${rb.name}, trial ${trB.trial})`), diff),
        h("div", { class: "trials pair", id: "rb-pair-trials" },
          labelled("A", ra, trialColumn(trA, ta.benchmark, ta.trials.find((tr) => tr.trial === trA.trial - 1) || null)),
          labelled("B", rb, trialColumn(trB, tb.benchmark, tb.trials.find((tr) => tr.trial === trB.trial - 1) || null))));
      document.body.dataset.rbPair = `${pairOpts.a},${pairOpts.b}`;
    }
    draw();
    main.replaceChildren(...head,
      h("p", { class: "muted" }, "Click a trial in either strip to put it beside the other run's chosen trial (the submitted ones first)."),
      h("p", { class: "options" }, h("label", {}, wsBox, " ignore whitespace in diffs")), box);
    ready("pair");
    autoRefresh(ta.in_progress || tb.in_progress, token);
  }

  // ------------------------------------------------------------------ compare page
  async function comparePage(i, j, token) {
    const cmp = await api.compare(i, j);
    if (!cmp) {
      main.replaceChildren(h("p", { class: "error" }, "these two runs have no task in common"));
      ready("compare");
      return;
    }
    setCrumbs(h("span", {}, `compare ${cmp.a.name} vs ${cmp.b.name}`));
    const m = cmp.mcnemar;
    const body = [
      h("h1", {}, "A: ", cmp.a.name, " vs B: ", cmp.b.name),
      h("p", { class: "muted" }, `A: ${cmp.a.benchmark} · ${cmp.a.strategy} · ${cmp.a.model}; B: ${cmp.b.benchmark} · ${cmp.b.strategy} · ${cmp.b.model}`),
      h("p", {}, `${cmp.n_common} tasks in common with a known final verdict`,
        cmp.only_in_a.length ? `; ${cmp.only_in_a.length} only in A` : "",
        cmp.only_in_b.length ? `; ${cmp.only_in_b.length} only in B` : "",
        cmp.unknown.length ? `; ${cmp.unknown.length} with an unknown verdict` : ""),
    ];
    if (m) {
      body.push(
        h("h2", {}, "McNemar table (final verdicts on common tasks)"),
        h("table", { id: "rb-mcnemar" },
          h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", {}, "B passed"), h("th", {}, "B failed"))),
          h("tbody", {},
            h("tr", {}, h("th", {}, "A passed"), h("td", { class: "n", dataset: { cell: "both" } }, m.both), h("td", { class: "n", dataset: { cell: "only_a" } }, m.only_a)),
            h("tr", {}, h("th", {}, "A failed"), h("td", { class: "n", dataset: { cell: "only_b" } }, m.only_b), h("td", { class: "n", dataset: { cell: "neither" } }, m.neither)))),
        h("p", { id: "rb-paired" },
          `final on common tasks: A ${pct(cmp.final_a)}, B ${pct(cmp.final_b)}; difference A − B ${withCI(cmp.diff)} (Newcombe interval, as in the report); exact McNemar p = ${m.p_value.toPrecision(3)}`),
      );
    }
    body.push(
      h("h2", {}, `Tasks where they differ (${cmp.differ.length})`),
      table("rb-differ", ["task", "A final", "B final", "A trial 1", "B trial 1"], cmp.differ.map((d) =>
        h("tr", { dataset: { task: d.id } },
          h("td", {}, d.id, " ", h("a", { href: taskHref(i, d.id) }, "[A]"), " ", h("a", { href: taskHref(j, d.id) }, "[B]"),
            " ", h("a", { href: taskVsHref(i, d.id, j), class: "side-by-side" }, "[A | B]")),
          h("td", {}, badge(d.a)), h("td", {}, badge(d.b)), h("td", {}, badge(d.a_first)), h("td", {}, badge(d.b_first))))),
    );
    main.replaceChildren(...body);
    ready("compare");
    autoRefresh(cmp.a.running > 0 || cmp.b.running > 0, token);
  }

  // ------------------------------------------------------------------ router
  async function route(keepScroll) {
    const token = ++renderToken;
    clearTimeout(refreshTimer);
    delete document.body.dataset.rbReady;
    delete document.body.dataset.rbIntervals;
    const y = window.scrollY;
    const parts = location.hash.replace(/^#\/?/, "").split("/");
    try {
      routes = await api.routes();
      if (token !== renderToken) return;
      delete document.body.dataset.rbNav;
      // A run named by its slug (URL-encoded), or by its index (old URLs: redirected).
      let redirect = false;
      const runOf = (part) => {
        const name = decodeURIComponent(part || "");
        const bySlug = routes.find((r) => r.slug === name);
        if (bySlug) return bySlug.id;
        if (/^\d+$/.test(name) && routes[Number(name)]) { redirect = true; return Number(name); }
        throw new Error(`no run ${JSON.stringify(name)} among the viewed runs (${routes.map((r) => r.slug).join(", ")})`);
      };
      const fix = (hash) => { if (redirect && location.hash !== hash) history.replaceState(null, "", hash); };
      if (parts[0] === "run" && parts[2] === "task" && parts.length >= 6 && parts[parts.length - 2] === "vs") {
        const i = runOf(parts[1]), j = runOf(parts[parts.length - 1]);
        const tid = decodeURIComponent(parts.slice(3, -2).join("/"));
        fix(taskVsHref(i, tid, j));
        await taskPairPage(i, j, tid, token);
      } else if (parts[0] === "run" && parts[2] === "task") {
        const i = runOf(parts[1]);
        const tid = decodeURIComponent(parts.slice(3).join("/"));
        fix(taskHref(i, tid));
        await taskPage(i, tid, token);
      } else if (parts[0] === "run") {
        const i = runOf(parts[1]);
        fix(runHref(i));
        await runPage(i, token);
      } else if (parts[0] === "compare") {
        const i = runOf(parts[1]), j = runOf(parts[2]);
        fix(compareHref(i, j));
        await comparePage(i, j, token);
      } else await sweepPage(token);
      if (keepScroll === true) window.scrollTo(0, y);
    } catch (err) {
      main.replaceChildren(h("p", { class: "error", id: "rb-error" }, String(err && err.message ? err.message : err)));
      document.body.dataset.rbReady = "error";
    }
  }
  window.addEventListener("hashchange", () => route(false));
  route(false);
})();
