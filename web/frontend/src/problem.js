// The problem page: the editor on the learner's draft, Run and Submit, live status, results,
// and the learner's earlier submissions to this problem.
import { api, explain } from "./api.js";
import { h } from "./dom.js";
import { createEditor } from "./editor.js";
import { siteLanguage, t } from "./i18n.js";
import { formatTime } from "./time.js";
import { readDraft, takeGuestDraft, writeDraft } from "./drafts.js";
import { badge, errorLine, follow, progressBar, renderResults, statusText, verdictLabel, waitingText } from "./results.js";

const SAVE_DELAY_MS = 800;
// The submission the results dock shows, kept across the language switch (a form that reloads
// the page): the page it returns to shows it again, read in the new language.
const SHOWN_KEY = "llm-judge:shown-result";
const TICK_MS = 100;
const PHONE = "(max-width: 960px)"; // one column: the results dock sits under the editor

export async function initProblem(data) {
  const problem = data.problem;
  const status = document.getElementById("status");
  const results = document.getElementById("results");
  const saveState = document.getElementById("save-state");
  const runButton = document.getElementById("run");
  const submitButton = document.getElementById("submit");
  const resetButton = document.getElementById("reset");
  let busy = false;
  let saveTimer = null;

  const setStatus = (...parts) => status.replaceChildren(...parts);
  const setSaveState = (text, kind = "") => {
    saveState.textContent = text;
    saveState.dataset.state = kind;
  };

  // Which text to open: unsaved local edits, else the server's draft, else the starter.
  // Every edit is also kept in this browser first (under this account's name, see drafts.js), so
  // a failed save loses nothing; "synced" says whether the server has it too.
  const account = data.loggedIn ? data.userId : null;
  const readLocal = (id) => readDraft(account, id);
  const writeLocal = (id, text, synced) => writeDraft(account, id, text, synced);
  let code = problem.starter;
  let local = readLocal(problem.id);
  if (data.loggedIn && !(local && !local.synced)) {
    // What they typed as a visitor just before logging in is theirs.
    const guest = takeGuestDraft(problem.id);
    if (guest && !guest.synced && typeof guest.code === "string") {
      local = guest;
      writeLocal(problem.id, guest.code, false);
    }
  }
  if (data.loggedIn) {
    let server = null;
    try {
      server = await api("GET", `/api/problems/${problem.id}/draft`);
    } catch (err) {
      setStatus(explain(err));
    }
    if (local && !local.synced) code = local.code;
    else if (server && server.code !== null) code = server.code;
  } else if (local) {
    code = local.code;
  }

  async function save() {
    saveTimer = null;
    if (!data.loggedIn) {
      setSaveState(t("Kept in this browser"), "local");
      return;
    }
    const text = editor.getCode();
    setSaveState(t("Saving…"), "saving");
    try {
      await api("PUT", `/api/problems/${problem.id}/draft`, { code: text });
      if (editor.getCode() === text) {
        writeLocal(problem.id, text, true);
        setSaveState(t("Draft saved"), "saved");
      }
    } catch (err) {
      setSaveState(t("Not saved to the server (kept in this browser)"), "error");
      setStatus(explain(err));
    }
  }

  function scheduleSave(text) {
    writeLocal(problem.id, text, false);
    setSaveState(t("Unsaved changes"), "dirty");
    if (saveTimer) clearTimeout(saveTimer);
    saveTimer = setTimeout(save, SAVE_DELAY_MS);
  }

  const editor = createEditor(document.getElementById("editor"), code, {
    onChange: scheduleSave,
    onRun: () => judge("run"),
    onSubmit: () => judge("submit"),
    label: t("Your solution (Python). Ctrl+Enter runs, Ctrl+Shift+Enter submits; Esc then Tab leaves the editor."),
  });
  if (local && !local.synced && data.loggedIn) save(); // push edits made while logged out or offline

  async function judge(mode) {
    if (busy) return;
    if (!data.loggedIn) {
      setStatus(h("span", {}, t("Running and submitting need an account."), " ",
        h("a", { href: data.loginUrl }, t("Log in")), " · ",
        h("a", { href: data.loginUrl.replace("/login", "/register") }, t("Register"))));
      return;
    }
    busy = true;
    runButton.disabled = submitButton.disabled = true;
    editor.clearMark();
    results.replaceChildren();
    shown = null;
    // Lines about the previous judgement (its time beside the reference's) go now, not when
    // this one is done.
    document.dispatchEvent(new CustomEvent("judge:start", { detail: { mode } }));
    showDock();
    const clock = elapsedClock();
    setStatus(h("span", { class: "badge pending" }, t("Sending…")), " ", clock.el);
    try {
      if (saveTimer) {
        clearTimeout(saveTimer);
        save();
      }
      const accepted = await api("POST", "/api/submissions", { problem_id: problem.id, code: editor.getCode(), mode });
      const sub = await follow(api, accepted.id, (s) => {
        if (s.status !== "done") {
          setStatus(h("span", { class: "badge pending", "data-status": s.status }, statusText(s.status)),
            " ", h("span", { "data-testid": "waiting-text" }, waitingText(s, mode)), " ", progressBar(s), " ", clock.el);
        }
      });
      clock.stop();
      setStatus(
        badge(sub.verdict), " ", verdictLabel(sub.verdict), " · ",
        h("a", { href: `/submissions/${sub.id}` }, t("Submission {id}", { id: sub.id }))
      );
      renderResults(results, sub, { onGoToLine: (n) => (editor.markLine(n), editor.focus()) });
      shown = { id: sub.id, judged: true };
      showDock();
      updateProgress(sub);
      const line = errorLine(sub);
      if (line) editor.markLine(line);
      if (history.loaded) loadHistory();
      // The course, solutions and scratch parts of the page listen for this.
      document.dispatchEvent(new CustomEvent("judge:done", { detail: sub }));
    } catch (err) {
      clock.stop();
      setStatus(h("span", { class: "banner error", role: "alert" }, explain(err)));
    } finally {
      clock.stop();
      busy = false;
      runButton.disabled = submitButton.disabled = false;
    }
  }

  // The result on screen survives the language switch: remembered as the switch's form is sent,
  // read again (in the new language) when the page comes back.
  let shown = null;
  document.addEventListener("submit", (event) => {
    if (!(event.target instanceof HTMLFormElement) || !event.target.matches('form[action="/lang"]')) return;
    try {
      if (shown) sessionStorage.setItem(SHOWN_KEY, JSON.stringify({ problem: problem.id, ...shown }));
    } catch (_err) {
      // Storage disabled: the switch still works; the dock opens empty.
    }
  });
  restoreShown();

  async function restoreShown() {
    let kept = null;
    try {
      kept = JSON.parse(sessionStorage.getItem(SHOWN_KEY) || "null");
      sessionStorage.removeItem(SHOWN_KEY);
    } catch (_err) {
      return;
    }
    if (!kept || kept.problem !== problem.id || !Number.isInteger(kept.id) || !data.loggedIn) return;
    if (!kept.judged) {
      openSubmission(kept.id);
      return;
    }
    try {
      const sub = await api("GET", `/api/submissions/${kept.id}?lang=${siteLanguage()}`);
      if (sub.status !== "done" || busy) return;
      shown = kept;
      setStatus(
        badge(sub.verdict), " ", verdictLabel(sub.verdict), " · ",
        h("a", { href: `/submissions/${sub.id}` }, t("Submission {id}", { id: sub.id }))
      );
      renderResults(results, sub, { onGoToLine: (n) => (editor.markLine(n), editor.focus()) });
      showDock();
      const line = errorLine(sub);
      if (line) editor.markLine(line);
    } catch (_err) {
      // Gone or not readable any more: nothing to show again.
    }
  }

  runButton.addEventListener("click", () => judge("run"));
  submitButton.addEventListener("click", () => judge("submit"));
  // The shortcuts also work while focus is outside the editor (a button, the statement).
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey) || event.defaultPrevented) return;
    if (event.target.closest && event.target.closest(".cm-editor")) return; // the editor's keymap has it
    event.preventDefault();
    judge(event.shiftKey ? "submit" : "run");
  });
  resetButton.addEventListener("click", async () => {
    if (!window.confirm(t("Replace your code with the starter? Your draft will be lost."))) return;
    editor.setCode(problem.starter);
    if (saveTimer) clearTimeout(saveTimer);
    saveTimer = null;
    writeLocal(problem.id, problem.starter, true);
    if (data.loggedIn) {
      try {
        await api("DELETE", `/api/problems/${problem.id}/draft`);
        setSaveState(t("Reset to the starter"), "saved");
      } catch (err) {
        setStatus(explain(err));
      }
    }
  });

  // The package changed since the learner's accepted best (macros.changed_since): its code goes
  // back into the editor (asking first if that replaces other code) and is submitted again.
  const resubmit = document.querySelector("[data-resubmit]");
  if (resubmit) {
    resubmit.addEventListener("click", async () => {
      const id = resubmit.dataset.resubmit;
      try {
        if (id) {
          const sub = await api("GET", `/api/submissions/${id}`);
          const replace = editor.getCode() === sub.code
            || window.confirm(t("Load this submission's code into the editor? Your current code is replaced."));
          if (!replace) return;
          editor.setCode(sub.code);
        }
        judge("submit");
      } catch (err) {
        setStatus(explain(err));
      }
    });
  }

  // The "My submissions" tab: this problem's submissions, each openable with its code.
  const history = { loaded: false };
  const historyBox = document.getElementById("history");
  async function loadHistory() {
    history.loaded = true;
    try {
      const rows = await api("GET", `/api/submissions?problem_id=${encodeURIComponent(problem.id)}&limit=50`);
      if (!rows.length) {
        historyBox.replaceChildren(h("p", {}, t("No submissions to this problem yet.")));
        return;
      }
      historyBox.replaceChildren(
        h("ul", { class: "history" }, rows.map((s) =>
          h("li", {},
            h("button", { class: "history-item", "data-submission": s.id, onclick: () => openSubmission(s.id) },
              `#${s.id} `, s.mode === "run" ? t("Run") : t("Submit"), " ",
              s.status === "done" ? badge(s.verdict) : h("span", { class: "badge pending" }, statusText(s.status)),
              " ", s.mode !== "submit" ? h("span", { class: "muted not-scored" }, t("not scored"))
                : s.score !== null ? `${s.score} / ${s.max_score}` : "",
              " ", h("time", { datetime: s.created_at }, formatTime(s.created_at))))))
      );
    } catch (err) {
      historyBox.replaceChildren(h("p", { class: "banner error" }, explain(err)));
    }
  }

  async function openSubmission(id) {
    try {
      const sub = await api("GET", `/api/submissions/${id}?lang=${siteLanguage()}`);
      shown = { id, judged: false };
      setStatus(
        t("Submission {id}", { id }), " · ",
        h("button", {
          class: "link-button",
          onclick: () => {
            if (window.confirm(t("Load this submission's code into the editor? Your current code is replaced."))) {
              editor.setCode(sub.code);
            }
          },
        }, t("Open its code in the editor")),
        " · ", h("a", { href: `/submissions/${id}` }, t("Open its page"))
      );
      renderResults(results, sub, { onGoToLine: (n) => (editor.setCode(sub.code), editor.markLine(n)) });
      showDock();
    } catch (err) {
      setStatus(explain(err));
    }
  }

  for (const tablist of document.querySelectorAll('[role="tablist"]')) {
    setupTabs(tablist, (panelId) => {
      if (panelId === "panel-history" && !history.loaded) loadHistory();
    });
  }
  const backToCode = document.getElementById("dock-to-editor");
  if (backToCode) {
    backToCode.addEventListener("click", () => {
      document.querySelector(".editor-pane").scrollIntoView({ block: "start" });
      editor.focus();
    });
  }
}

// The results dock (under the editor) on its Results tab; on a phone, scrolled into view when
// it is not: the learner sees what came back without hunting for it below the editor.
function showDock() {
  const tab = document.getElementById("tab-results");
  if (tab && tab.getAttribute("aria-selected") !== "true") tab.click();
  const dock = document.getElementById("results-dock");
  if (!dock || !window.matchMedia(PHONE).matches) return;
  const box = dock.getBoundingClientRect();
  if (box.top < 0 || box.top > window.innerHeight * 0.5) dock.scrollIntoView({ block: "start" });
}

// "3.2 s" since the click, ticking until the verdict: a long judgement is visibly alive.
function elapsedClock() {
  const started = performance.now();
  const el = h("span", { class: "elapsed", "data-testid": "elapsed" }, "0.0 s");
  const tick = () => (el.textContent = `${((performance.now() - started) / 1000).toFixed(1)} s`);
  const timer = setInterval(tick, TICK_MS);
  return { el, stop: () => clearInterval(timer) };
}

// The header's status badge and best score follow each judgement without a reload.
function updateProgress(sub) {
  // Code that could not load for a part not solved yet was not an attempt at this problem.
  const partMissing = sub.verdict === "CE" && (sub.parts || []).some((p) => p.origin === "missing")
    && (sub.cases || []).some((c) => c.missing_problem);
  if (partMissing) return;
  const best = document.querySelector("[data-testid=problem-best]");
  if (best && sub.mode === "submit" && sub.score !== null && !(Number(best.textContent) >= sub.score)) {
    best.textContent = String(sub.score);
  }
  const holder = document.querySelector("[data-testid=problem-status]");
  if (!holder) return;
  const current = holder.dataset.status;
  const solved = sub.mode === "submit" && sub.max_score > 0 && sub.score >= sub.max_score;
  // Accepted on the current version: what changed since an older acceptance is behind them.
  if (solved) document.querySelector("[data-testid=changed-since]")?.remove();
  const next = current === "solved" || solved ? "solved" : "attempted";
  if (next === current) return;
  holder.dataset.status = next;
  const label = next === "solved" ? t("Solved") : t("Attempted");
  holder.replaceChildren(h("span", { class: `badge st-${next}` }, label));
}

// The ARIA tabs pattern, per tablist (the statement's, the results dock's): click or arrow keys
// switch; only the selected tab is in the tab order; each tab shows its own panel only.
function setupTabs(tablist, onShow) {
  const tabs = [...tablist.querySelectorAll('[role="tab"]')];
  if (!tabs.length) return;
  const panel = (tab) => document.getElementById(tab.getAttribute("aria-controls"));
  const first = tabs.find((tab) => tab.getAttribute("aria-selected") === "true") || tabs[0];
  for (const tab of tabs) {
    const selected = tab === first;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    if (panel(tab)) panel(tab).hidden = !selected;
  }
  const select = (tab) => {
    for (const other of tabs) {
      const selected = other === tab;
      other.setAttribute("aria-selected", String(selected));
      other.tabIndex = selected ? 0 : -1;
      if (panel(other)) panel(other).hidden = !selected;
    }
    onShow(tab.getAttribute("aria-controls"));
  };
  for (const tab of tabs) {
    tab.addEventListener("click", () => select(tab));
    tab.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      const enabled = tabs.filter((x) => !x.disabled);
      const next = enabled[(enabled.indexOf(tab) + step + enabled.length) % enabled.length];
      next.focus();
      select(next);
      event.preventDefault();
    });
  }
}
