// A submission's page: its code read-only, and its results, followed live until judged.
import { api, explain } from "./api.js";
import { h } from "./dom.js";
import { createEditor } from "./editor.js";
import { t } from "./i18n.js";
import { badge, follow, progressBar, renderResults, statusText, verdictLabel, waitingText } from "./results.js";

export async function initSubmission(data) {
  const sub = data.submission;
  const status = document.getElementById("status");
  const results = document.getElementById("results");
  const holder = document.getElementById("code-view");
  holder.replaceChildren();
  const editor = createEditor(holder, sub.code, { readOnly: true, label: t("Submitted code (read-only)") });
  const show = (s) => {
    if (s.status !== "done") {
      status.replaceChildren(h("span", { class: "badge pending", "data-status": s.status }, statusText(s.status)),
        " ", h("span", { "data-testid": "waiting-text" }, waitingText(s, s.mode)), " ", progressBar(s));
      return;
    }
    status.replaceChildren(badge(s.verdict), " ", verdictLabel(s.verdict));
    renderResults(results, s, { onGoToLine: (n) => (editor.markLine(n), holder.scrollIntoView()) });
  };
  show(sub);
  if (sub.status !== "done") {
    try {
      await follow(api, sub.id, show);
    } catch (err) {
      status.replaceChildren(explain(err));
    }
  }
}
