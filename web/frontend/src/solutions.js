// The problem page's solutions part (issue 20, item 8). Started by main.js after initProblem; it
// hears "judge:done" (detail: the finished submission) on document. The "Solutions" tab stays
// locked until the learner's own accepted Submit; then it shows the reference and every accepted
// formulation, read-only and highlighted, each with why it is right, and the learner's time
// beside the reference's (GET /api/problems/{id}/solutions).
import { api, explain } from "./api.js";
import { h } from "./dom.js";
import { createEditor } from "./editor.js";
import { siteLanguage, t } from "./i18n.js";

// A note's `code` spans as <code>, the rest as text (never as HTML).
function noteText(note) {
  return note.split("`").map((part, i) => (i % 2 ? h("code", {}, part) : part));
}

function ms(value) {
  return value >= 100 ? `${Math.round(value)} ms` : `${value.toFixed(1)} ms`;
}

// The one speed figure: on a typical case (the median over the cases both timed) how many times
// the reference's time the learner's code takes. A sum of times is led by the slowest case, so
// the total's ratio is the figure only when no case had a measurable reference time.
function speedFigure(timing) {
  const figure = timing.typical_ratio ?? timing.ratio;
  return figure === null || figure === undefined ? null : figure.toFixed(figure < 10 ? 1 : 0);
}

// "your code 12 ms · reference 8.0 ms in all · 1.3× the reference's time on a typical case":
// the one line the page shows after AC.
export function timingLine(timing) {
  const vars = { yours: ms(timing.yours_ms), reference: ms(timing.reference_ms), ratio: speedFigure(timing) };
  return vars.ratio === null
    ? t("Your code {yours} · reference {reference} in all", vars)
    : t("Your code {yours} · reference {reference} in all · {ratio}× the reference's time on a typical case", vars);
}

function timingBlock(timing) {
  return h("section", { class: "solutions-timing", "data-testid": "solutions-timing" },
    h("p", {}, h("strong", {}, timingLine(timing)), " ",
      h("a", { href: `/submissions/${timing.submission_id}` }, t("Submission {id}", { id: timing.submission_id }))),
    h("p", { class: "help", "data-testid": "speed-explained" },
      t("A typical case is the median of the per-case ratios below (your time ÷ the reference's). Both timed inside the same sandbox on the same cases, start-up excluded; a few milliseconds either way are noise.")),
    h("details", {},
      h("summary", {}, t("Time per case")),
      h("table", { class: "timing-cases" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("Case")), h("th", { scope: "col" }, t("Your code")), h("th", { scope: "col" }, t("Reference")))),
        h("tbody", {}, timing.cases.map((c) => h("tr", {}, h("td", {}, h("code", {}, c.name)), h("td", {}, ms(c.yours_ms)), h("td", {}, ms(c.reference_ms))))))));
}

// One solution: a block that opens on its note and its code. The read-only editor is made the
// first time the block is open while the panel is in view (CodeMirror measures what it shows).
function solutionBlock(solution, open, panel) {
  const file = solution.kind === "reference" ? "reference.py" : `${solution.name.replace(/^accepted\//, "")}.py`;
  const title = solution.kind === "reference" ? t("Reference solution") : t("Accepted alternative");
  const code = h("div", { class: "editor readonly solution-code" });
  const block = h("details", { class: "solution", "data-solution": solution.name, open },
    h("summary", {}, h("span", { class: "solution-kind" }, title), " ", h("code", {}, file)),
    solution.note ? h("p", { class: "solution-note" }, noteText(solution.note)) : null,
    code);
  block.show = () => {
    if (block.open && !panel.hidden && !code.editor) createEditor(code, solution.code, { readOnly: true, label: file });
  };
  block.addEventListener("toggle", block.show);
  return block;
}

export function initSolutions(data) {
  const tab = document.getElementById("tab-solutions");
  const panel = document.getElementById("panel-solutions");
  const box = document.getElementById("solutions");
  if (!tab || !panel || !box || !data.problem) return;
  const problemId = data.problem.id;
  const locked = panel.querySelector(".solutions-locked");
  const lock = tab.querySelector(".solutions-lock");
  const after = document.getElementById("after-verdict");
  let loaded = false;

  const setOpen = (isOpen) => {
    tab.dataset.state = isOpen ? "open" : "locked";
    lock?.toggleAttribute("hidden", isOpen); // an svg: no .hidden property
    if (locked) locked.hidden = isOpen;
  };
  const showEditors = () => box.querySelectorAll("details.solution").forEach((b) => b.show());

  // `submission`: the accepted submit whose time is compared (none: the latest).
  async function load(submission) {
    loaded = true;
    const query = `lang=${siteLanguage()}` + (submission ? `&submission=${submission}` : "");
    try {
      const body = await api("GET", `/api/problems/${problemId}/solutions?${query}`);
      box.replaceChildren(
        body.timing ? timingBlock(body.timing) : "",
        ...body.solutions.map((s, i) => solutionBlock(s, i === 0, panel)));
      showEditors();
      return body;
    } catch (err) {
      loaded = false;
      if (err.status === 403 && err.code === "not_solved_yet") setOpen(false);
      else box.replaceChildren(h("p", { class: "banner error" }, explain(err)));
      return null;
    }
  }

  // setupTabs (problem.js) has shown the panel by the time this runs.
  tab.addEventListener("click", () => {
    if (tab.dataset.state === "open" && !loaded) load();
    else showEditors();
  });

  // A new judgement: the last one's time beside the reference's is not about it.
  document.addEventListener("judge:start", () => after?.querySelector(".solutions-after")?.remove());

  document.addEventListener("judge:done", async (event) => {
    const sub = event.detail;
    after?.querySelector(".solutions-after")?.remove();
    if (!sub || sub.mode !== "submit" || sub.verdict !== "AC") return;
    setOpen(true);
    // The link at once; the times once they are in (the first reader of a version waits for
    // the reference to be measured).
    const line = h("p", { class: "solutions-after", "data-testid": "solutions-after" },
      h("button", { class: "link-button", onclick: () => (tab.click(), tab.focus()) }, t("Read the solutions")));
    after?.append(line);
    const body = await load(sub.id);
    if (body && body.timing && line.isConnected) {
      line.prepend(h("span", { "data-testid": "timing-line" }, timingLine(body.timing)), " · ");
    }
  });
}
