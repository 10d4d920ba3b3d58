// The problem page's course part (issue 20). Started by main.js after initProblem; it hears
// "judge:done" (detail: the finished submission) on document. After an accepted Submit it puts
// a "Next problem" button in #after-verdict, the slot under the status line. A Run passes the
// public cases only, so it earns no "next": the problem is not solved by it.
import { h } from "./dom.js";
import { t } from "./i18n.js";

export function initCourse(data) {
  const next = data.course && data.course.next;
  const slot = document.getElementById("after-verdict");
  if (!next || !slot) return;
  document.addEventListener("judge:done", (event) => {
    const sub = event.detail || {};
    if (sub.verdict !== "AC" || sub.mode === "run") return;
    if (slot.querySelector(".course-next-button")) return; // solved stays solved
    slot.append(
      h("p", { class: "course-after" },
        h("a", { class: "button course-next-button", href: `/problems/${next.id}`, "data-testid": "next-problem" },
          t("Next problem: {id} · {title}", { id: next.id, title: next.title }), " →"))
    );
  });
}
