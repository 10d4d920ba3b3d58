// The problem page's scratch cell (issue 20, item 9): a snippet run after the learner's code in
// the sandbox (POST /api/scratch, then a long-poll like a Run), never scored. It shows what was
// printed, the last expression's value, and each call to an entry point beside the reference's
// answer where the inputs were like the public cases'. Text nodes only (learner output).
import { api } from "./api.js";
import { h } from "./dom.js";
import { createEditor } from "./editor.js";
import { t } from "./i18n.js";

const WAIT_S = 20;

// A first snippet for a package whose author wrote none (problem.toml's [scratch]): the
// starter's first class or function on a tensor. Every package of the course has its own.
function generic(starter) {
  const cls = /^class\s+(\w+)/m.exec(starter || "");
  const fn = /^def\s+([A-Za-z]\w*)/m.exec(starter || "");
  const lines = ["x = torch.randn(2, 8)", "print(x.shape)"];
  if (cls && (!fn || cls.index < fn.index)) lines.push(`m = ${cls[1]}(8)`, "m(x)");
  else if (fn) lines.push(`${fn[1]}(x)`);
  else lines.push("x");
  return lines.join("\n") + "\n";
}

// The author's snippets (GET /api/scratch/examples/ID): the example the cell opens with and
// the public cases' calls. A failed fetch leaves the generic snippet and no public cases.
async function examples(problem) {
  try {
    return await api("GET", `/api/scratch/examples/${encodeURIComponent(problem.id)}`);
  } catch (_err) {
    return { example: null, cases: [] };
  }
}

// "Use public case N": a menu of the public cases whose call the author wrote; choosing one
// puts that call in the editor (the learner presses Run).
function caseMenu(cases, fill) {
  const menu = document.getElementById("scratch-case");
  if (!menu || !cases.length) return;
  menu.replaceChildren(
    h("option", { value: "" }, t("Use a public case…")),
    ...cases.map((c, i) => h("option", { value: String(i) }, t("Public case {n}: {name}", { n: c.number, name: c.case }))),
  );
  menu.hidden = false;
  menu.addEventListener("change", () => {
    const chosen = cases[Number(menu.value)];
    if (menu.value !== "" && chosen) fill(chosen.snippet);
    menu.value = "";
  });
}

export function initScratch(data) {
  const panel = document.getElementById("panel-scratch");
  const holder = document.getElementById("scratch-editor");
  if (!panel || !holder || !data.problem) return;
  const problem = data.problem;
  const button = document.getElementById("scratch-run");
  const state = document.getElementById("scratch-state");
  const output = document.getElementById("scratch-output");
  let busy = false;

  const run = async () => {
    if (busy) return;
    if (!data.loggedIn) {
      state.replaceChildren(t("Running needs an account: "), h("a", { href: data.loginUrl }, t("Log in")));
      return;
    }
    const main = document.getElementById("editor");
    const code = main && main.editor ? main.editor.getCode() : "";
    busy = true;
    button.disabled = true;
    state.textContent = t("Running…");
    output.replaceChildren();
    try {
      const queued = await api("POST", "/api/scratch", { problem_id: problem.id, code, snippet: editor.getCode() });
      let view = queued;
      while (view.status !== "done") {
        view = await api("GET", `/api/scratch/${queued.id}?wait=${WAIT_S}`);
      }
      // A result the server cannot read (a bug) says so rather than showing nothing.
      state.textContent = view.unreadable ? t("The result of this run cannot be read. Run it again.") : "";
      output.replaceChildren(...render(view.result));
      // The dock scrolls on its own: bring the output's start into its view.
      output.scrollIntoView({ block: "nearest" });
      if (view.result && view.result.line && view.result.status !== "load") editor.markLine(view.result.line);
    } catch (err) {
      state.textContent = err && err.message ? err.message : t("The run failed.");
    } finally {
      busy = false;
      button.disabled = false;
    }
  };
  // Made when the tab is first opened: a page that never uses it holds one editor only. The
  // author's snippets come first, so the editor opens on the package's own example.
  let editor = null;
  let opening = null;
  const open = () => {
    if (!opening) {
      opening = examples(problem).then((found) => {
        const first = found.example ? found.example.replace(/^\n+/, "") : generic(problem.starter);
        editor = createEditor(holder, first, { onRun: run, label: t("Your input (Python)") });
        holder.editor = editor;
        caseMenu(found.cases || [], (code) => {
          editor.setCode(code.replace(/^\n+/, ""));
          editor.focus();
        });
      });
    }
    return opening;
  };
  const tab = document.getElementById("tab-scratch");
  if (tab) tab.addEventListener("click", open);
  if (!panel.hidden) open();
  button.addEventListener("click", () => open().then(run));
}

function block(title, body, testid, extra = "") {
  return h("section", { class: `scratch-block ${extra}`, "data-testid": testid }, h("h3", {}, title), body);
}

function pre(text, testid) {
  return h("pre", { class: "scratch-pre", "data-testid": testid }, text);
}

function render(result) {
  if (!result) return [];
  const out = [];
  const failed = result.status !== "ok";
  if (failed) {
    const title = result.status === "load" ? t("Your code did not load") : t("Your snippet stopped");
    out.push(block(title, pre(result.message || result.verdict, "scratch-error"), "scratch-failure", "bad"));
  }
  // What it printed (usually a line or two), then its calls beside the reference's answers
  // (what the learner came for), then the last expression's value.
  if (result.log) out.push(block(t("Printed"), pre(result.log, "scratch-log"), "scratch-printed"));
  if (result.calls && result.calls.length) {
    out.push(block(t("Beside the reference"), result.calls.map(renderCall), "scratch-calls"));
  }
  if (result.value) {
    const v = result.value;
    const about = v.shape ? `${v.dtype}  [${v.shape.join(", ")}]` : v.type;
    out.push(block(t("Returned"), [h("p", { class: "muted" }, about), pre(v.repr, "scratch-value")], "scratch-returned"));
  }
  if (result.note) out.push(h("p", { class: "muted scratch-note", "data-testid": "scratch-note" }, result.note));
  if (!failed && !out.length) out.push(h("p", { class: "muted" }, t("Nothing was printed or returned.")));
  return out;
}

function renderCall(call) {
  const verdict =
    call.match === true
      ? h("span", { class: "badge v-AC", "data-testid": "scratch-match" }, t("Same as the reference"))
      : call.match === false
        ? h("span", { class: "badge v-WA", "data-testid": "scratch-mismatch" }, t("Differs from the reference"))
        : h("span", { class: "badge muted-badge" }, t("Not compared"));
  const diff =
    call.difference !== null && call.difference !== undefined
      ? h("span", { class: "muted" }, `${t("largest difference")} ${Number(call.difference).toPrecision(3)}`)
      : null;
  const sides = h(
    "div",
    { class: "scratch-sides" },
    h("div", { class: "scratch-side" }, h("h4", {}, t("Yours")), pre(call.learner, "scratch-learner")),
    call.reference !== null && call.reference !== undefined
      ? h("div", { class: "scratch-side" }, h("h4", {}, t("Reference")), pre(call.reference, "scratch-reference"))
      : null,
  );
  return h(
    "div",
    { class: "scratch-call", "data-testid": "scratch-call" },
    h("p", { class: "scratch-call-head" }, h("code", {}, call.call), " ", verdict, " ", diff),
    sides,
    call.detail ? h("p", { class: "muted scratch-detail" }, call.detail) : null,
    call.reason ? h("p", { class: "muted scratch-reason", "data-testid": "scratch-reason" }, call.reason) : null,
  );
}
