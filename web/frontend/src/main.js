// One bundle for every page; <body data-page> says which part to start.
import "./app.css";
import { initAdmin } from "./admin.js";
import { pageData } from "./dom.js";
import { pageLanguage } from "./i18n.js";
import { renderMath } from "./math.js";
import { initProblem } from "./problem.js";
import { initSettings } from "./settings.js";
import { initSubmission } from "./submission.js";

function localTimes() {
  // The server writes UTC; show the reader's own clock.
  for (const el of document.querySelectorAll("time[datetime]")) {
    const when = new Date(el.getAttribute("datetime"));
    if (!Number.isNaN(when.getTime())) {
      el.title = el.textContent;
      el.textContent = when.toLocaleString(pageLanguage());
    }
  }
}

function autosubmitFilters() {
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form.submit());
  }
}

async function start() {
  const page = document.body.dataset.page;
  const data = pageData();
  localTimes();
  autosubmitFilters();
  const statement = document.querySelector(".statement");
  if (statement) renderMath(statement);
  if (page === "problem") await initProblem(data);
  else if (page === "submission") await initSubmission(data);
  else if (page === "settings") initSettings();
  else if (page === "admin") initAdmin();
  document.body.dataset.ready = "true"; // the browser tests wait for this
}

start().catch((err) => {
  document.body.dataset.ready = "error";
  console.error(err);
});
