// The results panel of a submission: a summary, then one row per case with its message, what the
// judge diagnosed, a picture of the error (public cases) and the hint of a matching known mistake.
// Hidden cases come with their description, the kinds of their diagnoses and the hint only.
import { h } from "./dom.js";
import { siteLanguage, t } from "./i18n.js";

export function verdictLabel(verdict) {
  const labels = {
    AC: t("Accepted"),
    WA: t("Wrong answer"),
    RE: t("Runtime error"),
    TLE: t("Time limit exceeded"),
    MLE: t("Memory limit exceeded"),
    OLE: t("Output limit exceeded"),
    CE: t("Load error"),
    SE: t("System error"),
  };
  return labels[verdict] || verdict;
}

export function statusText(status) {
  return { queued: t("Queued…"), running: t("Running…"), done: t("Done") }[status] || status;
}

export function badge(verdict) {
  return h("span", { class: `badge v-${verdict}`, "data-verdict": verdict, title: verdictLabel(verdict) }, verdict);
}

// A case's time: "4.1 ms", "352 ms", "10.0 s" (a time-out runs to the limit: seconds read better).
function ms(value) {
  if (value === null || value === undefined) return "—";
  if (value >= 1000) return `${(value / 1000).toFixed(1)} s`;
  return value < 10 ? `${value.toFixed(1)} ms` : `${Math.round(value)} ms`;
}

// The line of the learner's code an error points at, as the judge found it (a syntax error's, or
// the innermost frame of their own in a traceback): a case's `line`. The judge leaves it out where
// the error is in one of their parts' files (another file than this editor's) or a hidden case's.
export function errorLine(sub) {
  if (!sub || !["CE", "RE"].includes(sub.verdict)) return null;
  const pointed = (sub.cases || []).find((c) => ["CE", "RE"].includes(c.verdict) && c.line);
  return pointed ? pointed.line : null;
}

// Error / tolerance as a grid: dark cells fail, NaN and inf are marked. Built from text nodes and
// styles only, like everything else here (a learner's numbers never become markup).
function errorMap(m) {
  const cols = m.cells.length ? m.cells[0].length : 0;
  const grid = h("div", {
    class: "error-map-grid",
    role: "img",
    "aria-label": t("Error map: {rows} rows by {cols} columns", { rows: m.rows, cols: m.cols }),
    style: `grid-template-columns: repeat(${cols}, minmax(4px, 1fr))`,
  });
  for (const row of m.cells) {
    for (const v of row) {
      const cell = h("span", { class: "error-map-cell" });
      if (v === "nan" || v === "inf") {
        cell.classList.add(`error-map-${v}`);
        cell.title = v.toUpperCase();
      } else {
        // Within tolerance (<= 1) is white; beyond it, darker by orders of magnitude.
        const level = v <= 1 ? 0 : Math.min(1, 0.25 + Math.log10(v) / 4);
        cell.style.background = level ? `rgba(200, 30, 30, ${level.toFixed(2)})` : "transparent";
        cell.title = String(v);
      }
      grid.append(cell);
    }
  }
  return h("figure", { class: "error-map", "data-testid": "error-map" },
    h("figcaption", {},
      markdownLine(t("Where `{path}` is wrong (error ÷ tolerance)", { path: m.path || "" }), "span"), " · ",
      t("rows: axes {axis}", { axis: m.row_axis }), " · ", t("columns: axis {axis}", { axis: m.col_axis })),
    grid,
    h("p", { class: "error-map-legend" },
      h("span", { class: "swatch swatch-ok" }), " ", t("within tolerance"), "  ",
      h("span", { class: "swatch swatch-bad" }), " ", t("out of tolerance"), "  ",
      h("span", { class: "swatch error-map-nan" }), " NaN  ",
      h("span", { class: "swatch error-map-inf" }), " inf"));
}

// A recorded input's values, when the judge kept them (a small draw): "[0.12, -1.3, …]".
function inputValues(input) {
  if (!input.values) return h("span", { class: "muted" }, t("(too large to show)"));
  return h("code", { class: "input-values" }, `[${input.values.join(", ")}]`);
}

// What a failing public case fed the code (what it drew at random, named as the case's source
// names it) and expected against got at the first differing positions. The judge sends both for
// public cases only; a hidden case never carries them.
function whatWasCompared(c) {
  const out = [];
  if ((c.inputs || []).length) {
    out.push(h("div", { class: "compared-block", "data-testid": "case-inputs" },
      h("h4", {}, t("Inputs (drawn by the case)")),
      h("div", { class: "table-wrap" },
        h("table", { class: "compared" },
          h("thead", {}, h("tr", {},
            h("th", { scope: "col" }, t("Name")), h("th", { scope: "col" }, t("Shape")),
            h("th", { scope: "col" }, t("Dtype")), h("th", { scope: "col" }, t("Values")))),
          h("tbody", {}, c.inputs.map((input) => h("tr", {},
            h("th", { scope: "row" }, h("code", {}, input.name)),
            h("td", {}, h("code", {}, `(${input.shape.join(", ")})`)),
            h("td", {}, h("code", {}, input.dtype)),
            h("td", {}, inputValues(input)))))))));
  }
  for (const leaf of c.compared || []) {
    const rows = (leaf.positions || []).map((p) => h("tr", {},
      h("th", { scope: "row" }, h("code", {}, `[${p.index.join(", ")}]`)),
      h("td", { class: "num" }, h("code", {}, String(p.expected))),
      h("td", { class: "num got" }, h("code", {}, String(p.got)))));
    out.push(h("div", { class: "compared-block", "data-testid": "case-compared" },
      h("h4", {}, markdownLine(t("Expected and got: `{path}`", { path: leaf.path }), "span")),
      h("p", { class: "compared-types" },
        t("expected"), " ", h("code", {}, leaf.expected), " · ", t("got"), " ", h("code", {}, leaf.got)),
      rows.length
        ? h("div", { class: "table-wrap" },
          h("table", { class: "compared" },
            h("caption", {}, t("The first positions that differ")),
            h("thead", {}, h("tr", {},
              h("th", { scope: "col" }, t("Index")), h("th", { scope: "col", class: "num" }, t("Expected")),
              h("th", { scope: "col", class: "num" }, t("Got")))),
            h("tbody", {}, rows)))
        : null));
  }
  return out;
}

// A message that names the problem to solve first ends in its bare path, "(/problems/208)":
// shown beside a link to it, the path goes.
function withoutPath(message, id) {
  if (!id) return message;
  return message.replace(new RegExp(`\\s*[（(]/problems/${id}[)）]`), "");
}

// What every case says alike (the code did not load: a syntax error, a part not solved yet):
// said once above the table, not under each case. Null when the cases differ.
export function sharedFailure(sub) {
  const cases = sub.cases || [];
  if (cases.length < 2 || !["CE", "RE", "MLE"].includes(sub.verdict)) return null;
  const first = cases[0];
  if (!first.message || first.ran !== false) return null;
  const same = cases.every((c) => c.ran === false && c.verdict === first.verdict
    && (c.message === first.message || (!c.public && c.message === null))
    && ((c.missing_problem || null) === (first.missing_problem || null) || (!c.public && !c.missing_problem)));
  return same ? { message: first.message, missingProblem: first.missing_problem || null } : null;
}

function caseDetail(c, shared) {
  const parts = [];
  if (c.description) parts.push(markdownLine(c.description, "p", "case-description"));
  if (shared) return parts; // said once above the table
  if (c.message) {
    parts.push(h("pre", { class: "message", "data-testid": "case-message" }, withoutPath(c.message, c.missing_problem)));
  }
  if (c.missing_problem) parts.push(solveFirst(c.missing_problem));
  const said = (c.diagnoses || []).filter((d) => d.message);
  if (said.length) {
    parts.push(h("ul", { class: "diagnoses", "data-testid": "case-diagnoses" },
      ...said.map((d) => h("li", { "data-kind": d.kind }, markdownLine(d.message, "span")))));
  } else if ((c.diagnoses || []).length) {
    parts.push(h("p", { class: "diagnoses-kinds", "data-testid": "case-diagnoses" },
      t("What the judge sees: {kinds}", { kinds: c.diagnoses.map((d) => d.label || d.kind).join(", ") })));
  }
  // Reading order: what went wrong and why (message, diagnosis, hint, error map) before the
  // tables of what was compared, so that the first failing case's explanation fits the dock.
  if (c.hint) {
    parts.push(
      h("aside", { class: "hint", "data-testid": "case-hint", "aria-label": t("Hint") },
        h("strong", {}, t("Hint")), " ", markdownLine(c.hint, "span"))
    );
  }
  if (c.error_map) parts.push(errorMap(c.error_map));
  if (c.public) parts.push(...whatWasCompared(c));
  return parts;
}

// The problem to solve first (its part is missing), named by the case's `missing_problem`: a link
// to it beside the message, which stays plain text.
function solveFirst(id) {
  return h("p", { class: "solve-first" },
    h("a", { href: `/problems/${encodeURIComponent(id)}`, "data-testid": "problem-link" },
      t("Solve problem {id} first", { id })));
}

// Whose code each part was: the learner's accepted submission, the reference (the author's
// tools), a local file (the practice kit) or missing (not solved yet).
function partOrigin(part, loaded) {
  // Code that loaded without the part it could not import wrote that part itself: nothing missing.
  if (part.origin === "missing" && loaded && !part.used) return t("not imported (you wrote it yourself)");
  if (part.origin === "missing") return t("missing: solve problem {id} first", { id: part.problem });
  return { learner: t("yours"), reference: t("the reference solution"), file: t("your local file") }[part.origin]
    || part.origin;
}

// The parts this judgement offered the code (another problem's solution each, as a module of the
// course package), and whose they were. Which were imported is known only of code that loaded:
// a CE (a missing part, a syntax error) stopped before the imports were counted.
function partsUsed(parts, loaded) {
  return h("section", { class: "parts-used", "data-testid": "parts-used", "aria-labelledby": "parts-used-heading" },
    h("h3", { id: "parts-used-heading" }, t("Parts")),
    h("ul", { class: "parts" }, parts.map((part) =>
      h("li", { "data-part": part.problem, "data-origin": part.origin, "data-used": String(part.used) },
        h("code", { class: "module" }, `${part.module.split(".").join("/")}.py`),
        h("a", { href: `/problems/${part.problem}` }, t("problem {id}", { id: part.problem })),
        h("span", {},
          h("span", {
            class: `part-origin origin-${part.origin === "missing" && loaded && !part.used ? "own" : part.origin}`,
          }, partOrigin(part, loaded)),
          loaded && !part.used && part.origin !== "missing"
            ? h("span", { class: "muted" }, " · ", t("not imported: your code did without it"))
            : null)))));
}

// A Run has no score (its points are the public cases' only, nothing to rank): how many of the
// public cases passed, and that it is not scored.
function runSummary(sub) {
  const cases = sub.cases || [];
  const passed = cases.filter((c) => c.verdict === "AC").length;
  return t("Run: {passed} of {total} public cases passed, not scored", { passed, total: cases.length });
}

// The summary's time: what the learner's code took inside the sandbox, on the cases whose
// times the reader sees (a learner: the public ones), never the wait for a worker or the sandbox.
function timeLine(sub) {
  const hiddenTimed = (sub.cases || []).some((c) => !c.public && c.time_ms !== null && c.time_ms !== undefined);
  const time = ms(sub.time_ms);
  const text = hiddenTimed
    ? t("Your code's time on every case: {time}", { time })
    : t("Your code's time on the public cases: {time}", { time });
  return h("span", {
    class: "time",
    "data-testid": "summary-time",
    title: t("Measured inside the sandbox while your code ran: not the time spent waiting in the queue or starting the sandbox."),
  }, text);
}

// While a submission waits or runs: where it is, in words ("behind 2 submissions in the queue",
// "7 of 20 cases done: public cases done, hidden cases running").
export function waitingText(sub, mode) {
  if (sub.status === "queued") {
    return sub.ahead
      ? t("Waiting in the queue behind {n} submissions…", { n: sub.ahead })
      : t("Waiting for a free judge: yours is next…");
  }
  if (sub.status === "running") {
    const p = sub.progress;
    if (p && p.stage === "hidden") {
      return t("{done} of {total} cases done: public cases finished, hidden cases running…", { done: p.done, total: p.total });
    }
    if (p && mode === "run") return t("{done} of {total} public cases done…", { done: p.done, total: p.total });
    if (p) return t("{done} of {total} cases done: the public ones run first…", { done: p.done, total: p.total });
    return mode === "run" ? t("Running the public cases…") : t("Running the public cases first…");
  }
  return "";
}

// The same progress as a bar (for the eye; the words above are what a screen reader reads).
export function progressBar(sub) {
  const p = sub.progress;
  if (sub.status !== "running" || !p || !(p.total > 0)) return null;
  return h("progress", { class: "judging", max: String(p.total), value: String(Math.min(p.done, p.total)),
    "aria-hidden": "true", "data-testid": "progress-bar" });
}

export function renderResults(container, sub, { onGoToLine } = {}) {
  container.replaceChildren();
  if (!sub || sub.status !== "done") return;
  const isRun = sub.mode === "run";
  const summary = h(
    "div",
    { class: `summary v-${sub.verdict}`, "data-testid": "summary" },
    badge(sub.verdict),
    h("strong", { class: "verdict-text" }, verdictLabel(sub.verdict)),
    h("span", { class: "score", "data-testid": "summary-score" },
      isRun ? runSummary(sub) : `${t("Score")} ${sub.score} / ${sub.max_score}`),
    timeLine(sub)
  );
  container.append(summary);

  const line = errorLine(sub);
  if (line && onGoToLine) {
    container.append(
      h("p", { class: "banner error", role: "alert" },
        t("The error is on line {n} of your code.", { n: line }), " ",
        h("button", { class: "link-button", onclick: () => onGoToLine(line) }, t("Show line {n}", { n: line })))
    );
  }
  if (sub.unreadable) {
    container.append(h("p", { class: "banner error", role: "alert", "data-testid": "unreadable" },
      t("The judge's report of this submission cannot be read: only its verdict and score are shown. An admin can judge it again.")));
  }
  for (const warning of sub.warnings || []) container.append(h("p", { class: "banner warning" }, warning));
  if ((sub.parts || []).length) container.append(partsUsed(sub.parts, sub.verdict !== "CE"));

  const shared = sharedFailure(sub);
  if (shared) {
    container.append(h("div", { class: "shared-failure", "data-testid": "shared-failure" },
      h("pre", { class: "message", "data-testid": "case-message" }, withoutPath(shared.message, shared.missingProblem)),
      shared.missingProblem ? solveFirst(shared.missingProblem) : null,
      h("p", { class: "muted" }, t("Every case below stopped here: none of them ran."))));
  }
  const rows = [];
  const columns = isRun ? 3 : 4; // a Run has no points column: it is not scored
  for (const c of sub.cases || []) {
    rows.push(
      h("tr", { class: `case v-${c.verdict}`, "data-case": c.name },
        h("th", { scope: "row" }, c.name, c.public ? null : h("span", { class: "tag hidden-tag" }, t("hidden"))),
        h("td", {}, badge(c.verdict), " ", h("span", { class: "verdict-text" }, verdictLabel(c.verdict))),
        isRun ? null : h("td", { class: "num" }, `${c.score} / ${c.max_score}`),
        h("td", { class: "num" }, c.ran === false ? "—" : ms(c.time_ms)))
    );
    const detail = caseDetail(c, shared);
    if (detail.length) rows.push(h("tr", { class: "case-detail" }, h("td", { colspan: columns }, detail)));
    else if (!c.public && c.verdict !== "AC" && !shared) {
      rows.push(h("tr", { class: "case-detail" }, h("td", { colspan: columns, class: "muted" },
        t("A hidden case: only its verdict and points are shown. Check your code against the public cases and the statement's edge cases."))));
    }
  }
  container.append(
    h("div", { class: "table-wrap" },
      h("table", { class: "cases", "data-testid": "case-table" },
        h("caption", { class: "visually-hidden" }, t("Cases")),
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, t("Case")), h("th", { scope: "col" }, t("Verdict")),
          isRun ? null : h("th", { scope: "col", class: "num" }, t("Points")),
          h("th", { scope: "col", class: "num" }, t("Time")))),
        h("tbody", {}, rows)))
  );
  if (sub.log) {
    container.append(h("details", { class: "log" }, h("summary", {}, t("What your code printed")), h("pre", {}, sub.log)));
  }
}

// Follow a submission until it is judged: queued → running → done. After the first read each
// request long-polls (`?wait=`): the server answers as soon as the status changes, so the verdict
// shows the moment it is written, with one request open at a time instead of a poll every 250 ms.
export async function follow(api, id, onUpdate) {
  let failures = 0;
  let last = null;
  for (;;) {
    let sub;
    const asked = Date.now();
    try {
      // The page's language, not the browser's: the learner chose it on the site.
      sub = await api("GET", `/api/submissions/${id}?lang=${siteLanguage()}${last ? "&wait=20" : ""}`);
      failures = 0;
    } catch (err) {
      // A blip (a restart, a dropped connection) is retried; a refusal (401, 404) is not.
      if (err.status && err.status < 500) throw err;
      failures += 1;
      if (failures > 20) throw err;
    }
    if (sub) {
      onUpdate(sub);
      if (sub.status === "done") return sub;
    }
    // An answer that came back at once with nothing new (an error, or a server that does not
    // wait) is not asked again at once.
    if (!sub || (sub.status === last && Date.now() - asked < 200)) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    last = sub ? sub.status : last;
  }
}

// `code` spans of an author's or the judge's sentence as <code>; everything else stays text.
function markdownLine(text, tag, cls) {
  const el = h(tag, cls ? { class: cls } : {});
  const parts = String(text).split("`");
  parts.forEach((part, i) => {
    if (!part) return;
    el.append(i % 2 ? h("code", {}, part) : document.createTextNode(part));
  });
  return el;
}
