// One bundle for every page; <body data-page> says which part to start.
import "./app.css";
import "./course.css";
import "./solutions.css";
import "./scratch.css";
import "./compared.css"; // a failing case's inputs and expected vs got (results.js)
import "./layout.css"; // after app.css: it refines the workspace
import "./extras.css";
import "./classes.css"; // my classes, a class's page (cards on a phone)
import "./class_reports.css"; // the gradebook, class leaderboard and similar submissions
import "./theme.css"; // last: the dark theme overrides the colours above
import { initAdmin } from "./admin.js";
import { initClass, initClasses } from "./classes.js";
import { initCourse } from "./course.js";
import { initCelebration, initShortcuts, initSubmissionExtras } from "./extras.js";
import { initKit } from "./kit.js";
import { initLayout } from "./layout.js";
import { pageData } from "./dom.js";
import { guardLogout } from "./drafts.js";
import { formatTime } from "./time.js";
import { keepTypedAcrossLanguageSwitch } from "./typed.js";
import { renderMath } from "./math.js";
import { initProblem } from "./problem.js";
import { initScratch } from "./scratch.js";
import { initSettings } from "./settings.js";
import { initSolutions } from "./solutions.js";
import { initSubmission } from "./submission.js";
import "./preview.js"; // starts itself on a page of `judge preview` only (it has the banner)

function localTimes() {
  // The server writes UTC; show the reader's own clock.
  for (const el of document.querySelectorAll("time[datetime]")) {
    el.title = el.textContent;
    el.textContent = formatTime(el.getAttribute("datetime"));
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
  keepTypedAcrossLanguageSwitch(); // before the parts start: they see what was typed
  localTimes();
  autosubmitFilters();
  guardLogout(); // log-out saves, then clears, this browser's drafts
  initKit(); // the problem list's kit download, where there is one
  const statement = document.querySelector(".statement");
  if (statement) renderMath(statement);
  if (page === "problem") {
    await initProblem(data);
    initCourse(data);
    initSolutions(data);
    initScratch(data);
    initCelebration(data);
  }
  else if (page === "submission") {
    await initSubmission(data);
    initSubmissionExtras(data.submission);
  }
  else if (page === "settings") initSettings();
  else if (page === "admin") initAdmin();
  else if (page === "classes") initClasses();
  else if (page === "class") initClass(data);
  initShortcuts();
  initLayout(data); // last: splitters and narrow views around what the parts above drew
  document.body.dataset.ready = "true"; // the browser tests wait for this
}

start().catch((err) => {
  document.body.dataset.ready = "error";
  console.error(err);
});
