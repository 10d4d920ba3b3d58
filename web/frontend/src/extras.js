// Small things learners expect from a judge (issue 31, item 8): a list of the keyboard shortcuts
// ("?"), copy buttons, a diff between two of one's submissions, and a moment of celebration when
// the model is complete (the capstone accepted).
import { api, explain } from "./api.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";

// Copy `text()` to the clipboard; without a clipboard (an insecure origin, a denied permission)
// select `fallback` so the reader can press Ctrl+C. The button says which happened.
export function copyButton(button, text, fallback) {
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text());
      button.textContent = t("Copied");
    } catch {
      if (fallback) window.getSelection()?.selectAllChildren(fallback);
      button.textContent = t("Selected: press Ctrl+C");
    }
  });
}

// "?" anywhere but in a field or the editor opens the list of shortcuts; Esc closes it.
export function initShortcuts() {
  const rows = [
    ["Ctrl+Enter", t("Run the public cases")],
    ["Ctrl+Shift+Enter", t("Submit")],
    ["Esc, Tab", t("Leave the editor")],
    ["?", t("This list")],
  ];
  const dialog = h("dialog", { class: "shortcuts", "data-testid": "shortcuts", "aria-labelledby": "shortcuts-title" },
    h("h2", { id: "shortcuts-title" }, t("Keyboard shortcuts")),
    h("dl", {}, ...rows.flatMap(([keys, what]) => [h("dt", {}, h("kbd", {}, keys)), h("dd", {}, what)])),
    h("form", { method: "dialog" }, h("button", { class: "secondary" }, t("Close"))));
  document.body.append(dialog);
  document.addEventListener("keydown", (event) => {
    if (event.key !== "?" || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLElement && target.closest("input, textarea, select, [contenteditable], .cm-editor")) return;
    event.preventDefault();
    if (!dialog.open) dialog.showModal();
  });
}

// The capstone's first accepted Submit on this page: the learner's own model now matches the
// real one. Said once, in words, as a status (no animation for readers who ask for less motion).
export function initCelebration(data) {
  if (!data?.capstone) return;
  document.addEventListener("judge:done", (event) => {
    const sub = event.detail;
    if (sub?.mode !== "submit" || sub?.verdict !== "AC" || document.querySelector("[data-testid=celebration]")) return;
    const status = document.getElementById("status");
    const banner = h("div", { class: "banner success celebration", role: "status", "data-testid": "celebration" },
      h("strong", {}, t("Your model is complete.")), " ",
      t("Every part of it is your own code, and it computes what the real Qwen3.5 computes."));
    (status?.parentElement || document.body).insertBefore(banner, status ? status.nextSibling : null);
  });
}

// A line diff (longest common subsequence): [kind, line] with kind " ", "-" (only in `a`), "+".
export function lineDiff(a, b) {
  const x = a.split("\n");
  const y = b.split("\n");
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) out.push([" ", x[i++]]), j++;
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push(["-", x[i++]]);
    else out.push(["+", y[j++]]);
  }
  while (i < n) out.push(["-", x[i++]]);
  while (j < m) out.push(["+", y[j++]]);
  return out;
}

// A submission's page: copy its code, and compare it with another of one's submissions of the
// same problem (the older one on the left: lines it had are "-", lines this one has are "+").
export async function initSubmissionExtras(sub) {
  const copy = document.getElementById("code-copy");
  if (copy) copyButton(copy, () => sub.code, document.getElementById("code-view"));
  const select = document.getElementById("compare-with");
  const out = document.getElementById("code-diff");
  if (!select || !out) return;
  let others = [];
  try {
    const rows = await api("GET", `/api/submissions?problem_id=${encodeURIComponent(sub.problem_id)}&limit=50`);
    others = rows.filter((r) => r.id !== sub.id);
  } catch (err) {
    out.replaceChildren(explain(err));
    return;
  }
  if (!others.length) {
    select.closest("[data-compare]").hidden = true;
    return;
  }
  select.append(...others.map((r) => h("option", { value: r.id }, `#${r.id} · ${r.mode} · ${r.verdict || r.status}`)));
  select.addEventListener("change", async () => {
    if (!select.value) return out.replaceChildren();
    try {
      const other = await api("GET", `/api/submissions/${select.value}`);
      const [older, newer] = other.id < sub.id ? [other.code, sub.code] : [sub.code, other.code];
      const lines = lineDiff(older, newer);
      const changed = lines.filter(([k]) => k !== " ").length;
      out.replaceChildren(
        h("p", { class: "muted", "data-testid": "diff-summary" },
          changed ? t("{n} lines differ (− only in the older one, + only in the newer one)", { n: changed })
            : t("The two submissions have the same code.")),
        h("pre", { class: "diff", "data-testid": "code-diff" },
          ...lines.map(([k, line]) => h("span", { class: k === "+" ? "add" : k === "-" ? "del" : "same" }, `${k} ${line}\n`))));
    } catch (err) {
      out.replaceChildren(explain(err));
    }
  });
}
