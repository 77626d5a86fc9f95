// The report's question table and traces. Record data is only ever set as text (textContent), never as markup.
"use strict";
(function () {
  const index = JSON.parse(document.getElementById("frames-index").textContent);
  const runs = index.runs, questions = index.questions, rows = index.rows;
  const many = runs.length > 1;
  const $ = (id) => document.getElementById(id);

  // el("td", {class: "x"}, "text", child): strings become text nodes, so no record field is parsed as HTML.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  const fmt = (x, d) => (x === null || x === undefined ? "–" : Number(x).toFixed(d));
  const disagree = (i) => many && new Set(rows[i].map((r) => (r ? r.v : "absent"))).size > 1;

  // --- filters --------------------------------------------------------------------------------------------
  const typeSelect = $("f-type"), runSelect = $("f-run");
  for (const t of index.types) typeSelect.append(el("option", {value: t}, t));
  if (many) {
    runSelect.append(el("option", {value: "any"}, "any run"));
    runs.forEach((r, i) => runSelect.append(el("option", {value: i}, r.name)));
    $("disagree-wrap").hidden = false;
    $("sbs-wrap").hidden = false;
  } else {
    runSelect.append(el("option", {value: 0}, runs[0].name));
    $("run-wrap").hidden = true;
  }

  function matches(i) {
    const q = questions[i];
    const which = runSelect.value === "any" ? rows[i].map((_, k) => k) : [Number(runSelect.value)];
    const picked = which.map((k) => rows[i][k]).filter(Boolean);
    const verdict = $("f-verdict").value, type = typeSelect.value;
    if (verdict !== "all" && !picked.some((r) => r.v === verdict)) return false;
    if (type !== "all" && !q.types.includes(type)) return false;
    if ($("f-fns").checked && !picked.some((r) => r.fns)) return false;
    if ($("f-sw").checked && !picked.some((r) => r.sw)) return false;
    if ($("f-cut").checked && !picked.some((r) => r.tq > 0)) return false;
    if (many && $("f-disagree").checked && !disagree(i)) return false;
    const text = $("f-search").value.trim().toLowerCase();
    return !text || haystack(i).includes(text);
  }
  const hay = [];
  function haystack(i) {  // built once per question, on the first search
    if (hay[i] === undefined) {
      const q = questions[i];
      hay[i] = [q.id, q.q, q.g, ...rows[i].map((r) => (r ? r.a : ""))].join("\n").toLowerCase();
    }
    return hay[i];
  }

  // --- table ----------------------------------------------------------------------------------------------
  const body = $("questions").tBodies[0];
  const trs = questions.map((q, i) => {
    const cells = [el("td", {}, q.id), el("td", {class: "types"}, q.types.join(", ")), el("td", {class: "q"}, q.q)];
    rows[i].forEach((r) => {
      if (!r) { cells.push(el("td", {colspan: 6, class: "absent"}, "not run")); return; }
      cells.push(el("td", {class: "v " + r.v}, r.v), el("td", {class: "n"}, fmt(r.r, 2)),
                 el("td", {class: "n"}, r.gs === null ? "–" : r.gs + "/" + r.gf), el("td", {class: "n"}, fmt(r.s, 0)),
                 el("td", {class: "n"}, r.t), el("td", {class: "n" + (r.tq ? " warn" : "")}, r.tq));
    });
    const tr = el("tr", {"data-id": q.id, "data-index": i, tabindex: 0}, cells);
    tr.addEventListener("click", () => openQuestion(i));
    tr.addEventListener("keydown", (e) => { if (e.key === "Enter") openQuestion(i); });
    return tr;
  });

  const keys = {id: (i) => natural(questions[i].id), types: (i) => questions[i].types.join(","),
                q: (i) => questions[i].q};
  function natural(id) { return /^\d+$/.test(id) ? id.padStart(12, "0") : "~" + id; }
  function cellKey(run, field) {
    const order = {correct: 0, wrong: 1, unrated: 2, failed: 3, none: 4};
    return (i) => {
      const r = rows[i][run];
      if (!r) return Infinity;
      return field === "v" ? order[r.v] : field === "gs" ? (r.gs === null ? -1 : r.gs) : r[field] ?? -1;
    };
  }
  let sortKey = many ? "disagree" : "id", sortDir = 1, sorted = "";
  function render() {
    const key = sortKey === "disagree" ? (i) => (disagree(i) ? "0" : "1") + natural(questions[i].id)
      : keys[sortKey] || cellKey(...sortKey.split(":").map((x, k) => (k ? x : Number(x))));
    const order = questions.map((_, i) => i).sort((a, b) => {
      const x = key(a), y = key(b);
      return (x < y ? -1 : x > y ? 1 : a - b) * sortDir;
    });
    let shown = 0;
    for (const i of order) {
      const ok = matches(i);
      if (trs[i].hidden === ok) trs[i].hidden = !ok;  // touch only rows that change: no relayout of the rest
      shown += ok ? 1 : 0;
    }
    if (sorted !== sortKey + sortDir) {  // rows move only when the order changed
      const frag = document.createDocumentFragment();
      for (const i of order) frag.append(trs[i]);
      body.append(frag);
      sorted = sortKey + sortDir;
    }
    $("count").textContent = shown + " of " + questions.length + " questions";
  }
  document.querySelectorAll("#questions th[data-key]").forEach((th) => th.addEventListener("click", () => {
    sortDir = sortKey === th.dataset.key ? -sortDir : 1;
    sortKey = th.dataset.key;
    render();
  }));
  for (const id of ["f-verdict", "f-type", "f-run", "f-fns", "f-sw", "f-cut", "f-disagree"]) {
    $(id).addEventListener("change", render);
  }
  $("f-search").addEventListener("input", render);

  // --- trace ----------------------------------------------------------------------------------------------
  const traces = new Map();  // parsed on first open: the page parses only the table's rows when it opens
  function trace(i, k) {
    const key = i + ":" + k;
    if (!traces.has(key)) {
      const node = document.getElementById("t-" + i + "-" + k);
      traces.set(key, node ? JSON.parse(node.textContent) : null);
    }
    return traces.get(key);
  }
  let current = null;
  function openQuestion(i) {
    current = i;
    trs.forEach((tr) => tr.classList.toggle("open", tr === trs[i]));
    const q = questions[i], box = $("trace");
    box.replaceChildren();
    box.append(el("h2", {}, "Question " + q.id), el("p", {class: "question"}, q.q),
               el("p", {}, el("b", {}, "Gold answer: "), q.g),
               el("p", {class: "types"}, "Reasoning types: " + (q.types.join(", ") || "–")));
    const sideBySide = !many || $("sbs").checked;
    const which = sideBySide ? runs.map((_, k) => k) : [runSelect.value === "any" ? 0 : Number(runSelect.value)];
    const cols = el("div", {class: "runs", style: "--cols:" + which.length});
    for (const k of which) cols.append(runColumn(trace(i, k), runs[k]));
    box.append(cols);
    if (location.hash !== "#q=" + encodeURIComponent(q.id)) history.replaceState(null, "", "#q=" + encodeURIComponent(q.id));
    box.scrollIntoView({block: "start"});
  }
  $("sbs").addEventListener("change", () => { if (current !== null) openQuestion(current); });

  // Verdict methods that mean the judge model was asked; a short-cut's verdict names no judge.
  const ASKED = new Set(["judge", "unparsed", "error"]);

  function runColumn(t, run) {
    const col = el("section", {class: "trace-run", "data-run": run.name}, el("h3", {}, run.name),
                   el("p", {class: "label"}, run.label));
    if (!t) return col.append(el("p", {}, "This run has no record of the question.")), col;
    const v = t.verdict;
    col.append(el("p", {class: "verdict " + t.verdict_class}, "Verdict: " + t.verdict_class +
                  (v ? " (" + v.outcome + ", " + v.method + (v.judge && ASKED.has(v.method) ? ", judge " + v.judge : "") + ")" : "")));
    if (v && v.explanation) col.append(el("p", {class: "why"}, "Judge's reason: " + v.explanation));
    if (v && v.error) col.append(el("p", {class: "warn"}, "Judge error: " + v.error));
    if (t.verdict2) col.append(el("p", {}, "Second judge: " + t.verdict2.outcome + " (" + t.verdict2.method + "): " +
                                   t.verdict2.explanation));
    if (t.error) col.append(el("p", {class: "warn"}, "Failed: " + t.error));
    col.append(el("p", {}, el("b", {}, "Answer: "), t.answer || "(none)"),
               el("p", {class: "meta"}, fmt(t.seconds, 1) + " s, " + t.tokens + " tokens, " + t.llm_calls +
                  " LLM calls; gold answer in the prompt: " + (t.answer_in_prompt === null ? "–" : t.answer_in_prompt)));
    col.append(el("h4", {}, "Gold articles"), el("ul", {class: "gold"}, t.gold.map((g) => el("li",
      {class: g.step === null || g.step === undefined ? "missed" : "found"}, el("span", {class: "gold-mark"}, "★ "),
      g.title, " — " + (g.step === null || g.step === undefined ? (g.covered ? "never found" : "not in the index")
        : "found at step " + g.step + (g.origin ? " by a " + g.origin + " query" : "") +
          (g.at ? " (" + g.at + " articles read)" : "")) + (g.shown ? "; shown to the answer" : "")))));
    if (t.truncated.length) col.append(el("p", {class: "warn"}, t.truncated.length + " query(ies) reached the " +
                                          index.cap + "-character cap (likely cut short)"));
    col.append(el("h4", {}, "Steps"));
    for (const s of t.steps) col.append(stepView(s));
    col.append(el("h4", {}, "What the answer prompt showed" + (t.budget ? " (" + t.budget + " tokens)" : "")));
    if (!t.passages.length) col.append(el("p", {}, "Nothing (no answer was asked for, or no documents)."));
    for (const p of t.passages) {
      col.append(el("details", {class: "passage" + (p.gold ? " gold" : "")},
                    el("summary", {}, p.gold ? el("span", {class: "gold-mark"}, "★ ") : null, p.title || "(before the first article)"),
                    el("pre", {}, p.text)));
    }
    if (t.text_cut) col.append(el("p", {class: "meta"}, "(the recorded prompt text was cut at its size limit)"));
    if (t.reasoning) col.append(el("h4", {}, "Reasoning"), el("pre", {class: "reasoning"}, t.reasoning));
    if (t.raw_answer && t.raw_answer !== t.answer) {
      col.append(el("details", {}, el("summary", {}, "The model's whole reply"), el("pre", {}, t.raw_answer)));
    }
    return col;
  }

  function stepView(s) {
    const hits = s.hits === null ? "" : s.hits + " hits, ";
    const again = s.hits === null ? "" : ", " + Math.max(0, s.hits - s.new.length) + " already in the context or repeated";
    const box = el("div", {class: "step", "data-step": s.step},
                   el("h5", {}, "Step " + s.step + ": " + hits + s.new.length + " new documents" + again +
                      (s.fallback ? " (fallback plan)" : "") +
                      (s.replayed ? " (the model's last plan replayed: no model call)" : "")));
    box.append(el("ol", {class: "queries"}, s.queries.map((q) => el("li", {class: q.cut ? "cut" : null},
      q.text, el("span", {class: "meta"}, " [" + q.origin + (q.hits === null ? "" : ", " + q.hits + " hits") +
                  (q.cut ? ", at the length cap" : "") + "]")))));
    if (s.tools.length) box.append(el("p", {}, "Tool calls: " + s.tools.join(", ")));
    if (s.dropped.length) box.append(el("p", {class: "meta"}, "Dropped as repeats: " + s.dropped.join("; ")));
    for (const e of s.errors) box.append(el("p", {class: "warn"}, e));
    if (s.gold_found.length) box.append(el("p", {class: "found"}, el("span", {class: "gold-mark"}, "★ "),
                                            "Gold found here: " + s.gold_found.join("; ")));
    box.append(el("details", {}, el("summary", {}, "New documents (" + s.new.length + ")"),
                  el("ul", {class: "docs"}, s.new.map((d) => el("li", {class: d.gold ? "gold" : null},
                    d.gold ? el("span", {class: "gold-mark"}, "★ ") : null, d.title)))));
    return box;
  }

  render();
  const wanted = decodeURIComponent(location.hash.replace(/^#q=/, ""));
  const at = questions.findIndex((q) => q.id === wanted);
  if (location.hash.startsWith("#q=") && at >= 0) openQuestion(at);
  document.body.dataset.readyAt = Math.round(performance.now());  // ms from navigation: bench/html_report.py reads it
  document.body.dataset.ready = "1";  // for browser tests: the table is built
})();
