// The problem page's layout (issue 31, items 2 and 6), started by main.js after the other parts.
// - On a laptop: two splitters, statement | workspace and editor / results, dragged with a mouse
//   or a finger or moved with the arrow keys, remembered in this browser (localStorage).
// - On one column (a tablet or a phone, up to 960 px): Statement | Code | Results views instead
//   of the whole statement above the editor; the choice lasts while the browser tab is open
//   (sessionStorage: a language switch reloads the page), and the Results tab shows a badge when
//   a result comes while another view is chosen. Without the script, the page stays one long
//   column.
// - Whenever a result is drawn: the first failing case is brought into view, its message,
//   diagnosis and hint come first, case names may wrap after "_" (never inside a word), and
//   each error map learns its size (CSS draws it).
// results.js draws the results; this module only reads what it drew (the DOM is the contract):
// it waits while #results is aria-busy (a result still streaming in) and acts on the rest.
import { h } from "./dom.js";
import { t } from "./i18n.js";

// One column (app.css stacks the panes below 961 px): layout.css shows the views in this range.
const NARROW = "(max-width: 960px)";
const STORE = "llm-judge:layout:";
const KEY_STEP = 0.02;
const PAGE_STEP = 0.1;

// Each splitter: which share it sets (of the page's width, of the workspace's height), the
// share a first visit gets, and the bounds that keep both sides usable.
const COLUMNS = { key: "columns", fallback: 0.5, min: 0.25, max: 0.75 };
const DOCK = { key: "dock", fallback: 0.55, min: 0.2, max: 0.8 };

export function initLayout(data) {
  for (const results of document.querySelectorAll(".results")) watchResults(results);
  const layout = document.querySelector(".problem-layout");
  if (!layout) return;
  const statementPane = document.querySelector(".statement-pane");
  const editorPane = document.querySelector(".editor-pane");
  splitter(document.getElementById("split-columns"), COLUMNS, {
    apply: (share) => {
      layout.style.setProperty("--statement-fr", `${(share * 100).toFixed(1)}fr`);
      layout.style.setProperty("--workspace-fr", `${(100 - share * 100).toFixed(1)}fr`);
    },
    measure: (x) => {
      const box = layout.getBoundingClientRect();
      return (x - box.left) / box.width;
    },
  });
  splitter(document.getElementById("split-dock"), DOCK, {
    apply: (share) => editorPane.style.setProperty("--dock-share", `${(share * 100).toFixed(1)}%`),
    // The dock's share of the pane's inside: from the pointer down to the pane's inner bottom.
    measure: (_x, y) => {
      const box = editorPane.getBoundingClientRect();
      const style = getComputedStyle(editorPane);
      const top = box.top + parseFloat(style.borderTopWidth) + parseFloat(style.paddingTop);
      const bottom = box.bottom - parseFloat(style.borderBottomWidth) - parseFloat(style.paddingBottom);
      return (bottom - y) / (bottom - top);
    },
  });
  const views = narrowViews(layout, { statementPane, editorPane }, data.problem ? data.problem.id : "");
  document.body.dataset.layout = "ready"; // the narrow tabs' CSS waits for this (no script: stacked)

  // A result drawn in the dock: the first failing case in view, or a badge on the Results tab.
  const results = document.getElementById("results");
  if (results) {
    onResult(results, (summary) => {
      if (views.narrow() && views.current() !== "results" && !views.wantResults()) {
        const shown = summary.querySelector("[data-verdict]");
        views.mark("new", shown ? shown.dataset.verdict : "");
        return;
      }
      if (views.narrow()) views.select("results");
      views.seen();
      revealFirstFailing(results);
    });
  }
  // While a judgement runs (problem.js's pending badge in #status), the Results tab says so.
  const status = document.getElementById("status");
  if (status) {
    new MutationObserver(() => {
      if (status.querySelector(".badge.pending")) views.mark("pending");
    }).observe(status, { childList: true, subtree: true });
  }
}

// ------------------------------------------------------------------------------ splitters

function readShare(spec) {
  try {
    const value = parseFloat(localStorage.getItem(STORE + spec.key));
    return Number.isFinite(value) ? clamp(value, spec) : spec.fallback;
  } catch (_err) {
    return spec.fallback; // storage refused (a private window): the default, not remembered
  }
}

function saveShare(spec, value) {
  try {
    if (value === null) localStorage.removeItem(STORE + spec.key);
    else localStorage.setItem(STORE + spec.key, value.toFixed(3));
  } catch (_err) {
    // not remembered, still applied
  }
}

function clamp(value, spec) {
  return Math.min(spec.max, Math.max(spec.min, value));
}

// A focusable role="separator" (the WAI-ARIA window splitter): pointer events for the mouse, a
// pen and touch (touch-action: none in CSS keeps the page from scrolling under the finger), the
// arrow keys, Page Up/Down, Home/End; a double-click goes back to the default.
function splitter(sep, spec, { apply, measure }) {
  if (!sep) return;
  const vertical = sep.getAttribute("aria-orientation") === "vertical";
  let share = readShare(spec);
  const set = (value, save) => {
    share = clamp(value, spec);
    apply(share);
    sep.setAttribute("aria-valuenow", String(Math.round(share * 100)));
    if (save) saveShare(spec, share);
  };
  sep.setAttribute("aria-valuemin", String(Math.round(spec.min * 100)));
  sep.setAttribute("aria-valuemax", String(Math.round(spec.max * 100)));
  set(share, false);

  sep.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    event.preventDefault();
    sep.setPointerCapture(event.pointerId);
    sep.focus({ preventScroll: true });
    document.body.classList.add("resizing", vertical ? "resizing-columns" : "resizing-rows");
  });
  sep.addEventListener("pointermove", (event) => {
    if (!sep.hasPointerCapture(event.pointerId)) return;
    set(measure(event.clientX, event.clientY), false);
  });
  // The drag ends however the capture goes (a lifted finger, a cancelled touch, a lost window):
  // the share is kept where it was left.
  sep.addEventListener("lostpointercapture", () => {
    document.body.classList.remove("resizing", "resizing-columns", "resizing-rows");
    set(share, true);
  });
  sep.addEventListener("dblclick", () => {
    set(spec.fallback, false);
    saveShare(spec, null);
  });
  sep.addEventListener("keydown", (event) => {
    // The value is the share before the separator (statement) or after it (the dock): the
    // arrows move the separator the way they point.
    const grow = vertical ? { ArrowRight: 1, ArrowLeft: -1 } : { ArrowUp: 1, ArrowDown: -1 };
    let next = null;
    if (event.key in grow) next = share + grow[event.key] * (event.shiftKey ? PAGE_STEP : KEY_STEP);
    else if (event.key === "PageUp") next = share + PAGE_STEP;
    else if (event.key === "PageDown") next = share - PAGE_STEP;
    else if (event.key === "Home") next = spec.min;
    else if (event.key === "End") next = spec.max;
    if (next === null) return;
    event.preventDefault();
    set(next, true);
  });
}

// ------------------------------------------------------------------------- narrow views

// Statement | Code | Results on a narrow screen. The bar is in problem.html without tab roles
// (problem.js sets up every role="tablist" it finds, and hides panels; these panes must stay
// shown on a laptop): the roles are given here, and CSS shows one view within NARROW only.
function narrowViews(layout, { statementPane, editorPane }, problemId) {
  const bar = document.querySelector("[data-narrow-tabs]");
  const media = window.matchMedia(NARROW);
  const none = { narrow: () => false, current: () => null, select() {}, mark() {}, seen() {}, wantResults: () => false };
  if (!bar) return none;
  const dock = document.getElementById("results-dock");
  const panes = { statement: statementPane, code: editorPane, results: dock };
  const tabs = [...bar.querySelectorAll("[data-view]")];
  const badge = bar.querySelector("[data-testid=results-tab-badge]");
  const live = document.querySelector("[data-narrow-live]");
  const key = `${STORE}view:${problemId}`;
  let wantResults = false; // the learner asked to see a result (a past submission's)
  let unseen = false; // a result came while another view was chosen

  bar.setAttribute("role", "tablist");
  for (const tab of tabs) {
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-controls", panes[tab.dataset.view].id);
  }
  // The panes are tab panels only while they are shown as such.
  const labels = new Map(Object.values(panes).map((pane) => [pane, pane.getAttribute("aria-labelledby")]));
  const roles = () => {
    for (const tab of tabs) {
      const pane = panes[tab.dataset.view];
      if (media.matches) {
        pane.setAttribute("role", "tabpanel");
        pane.setAttribute("aria-labelledby", tab.id);
        continue;
      }
      pane.removeAttribute("role");
      if (labels.get(pane)) pane.setAttribute("aria-labelledby", labels.get(pane));
      else pane.removeAttribute("aria-labelledby");
    }
  };

  const select = (view, { focus = false } = {}) => {
    if (!panes[view]) view = "statement";
    layout.dataset.view = view;
    for (const tab of tabs) {
      const selected = tab.dataset.view === view;
      tab.setAttribute("aria-selected", String(selected));
      tab.tabIndex = selected ? 0 : -1;
      if (selected && focus) tab.focus();
    }
    try {
      sessionStorage.setItem(key, view);
    } catch (_err) {
      // the choice lasts until the next page only
    }
    if (view === "results") {
      wantResults = false;
      if (badge) badge.hidden = true;
      if (unseen) {
        unseen = false;
        const results = document.getElementById("results");
        if (results) requestAnimationFrame(() => revealFirstFailing(results));
      }
    }
  };

  // "pending" while a judgement runs, "new" (with its verdict) when its result came while
  // another view was chosen; shown on a narrow screen only (CSS), cleared by the Results view.
  const mark = (state, verdict = "") => {
    if (!badge) return;
    if (state === "pending") {
      wantResults = false; // a new judgement: an earlier click on a past submission is over
      if (layout.dataset.view === "results") return;
      badge.className = "badge pending tab-badge";
      badge.textContent = "…";
      badge.title = t("Running…");
    } else {
      unseen = true;
      badge.className = `badge tab-badge v-${verdict}`;
      badge.textContent = verdict || "•";
      badge.title = t("New result: {verdict}", { verdict });
      if (live && media.matches) live.textContent = badge.title;
    }
    badge.hidden = false;
  };

  for (const tab of tabs) {
    tab.addEventListener("click", () => select(tab.dataset.view));
    tab.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      const at = tabs.indexOf(tab);
      let next = null;
      if (step) next = tabs[(at + step + tabs.length) % tabs.length];
      else if (event.key === "Home") next = tabs[0];
      else if (event.key === "End") next = tabs[tabs.length - 1];
      if (!next) return;
      event.preventDefault();
      select(next.dataset.view, { focus: true });
    });
  }
  // Opening a past submission (the statement's "My submissions") is asking to see its result.
  document.addEventListener("click", (event) => {
    if (event.target.closest && event.target.closest(".history-item")) wantResults = true;
  }, true);
  // "Back to the code" under the results: the Code view, with the cursor in the editor.
  const back = document.getElementById("dock-to-editor");
  if (back) {
    back.addEventListener("click", () => {
      if (!media.matches) return;
      select("code");
      window.scrollTo({ top: 0 });
      document.querySelector("#editor .cm-content")?.focus();
    });
  }

  let first = "statement";
  try {
    first = sessionStorage.getItem(key) || first;
  } catch (_err) {
    // a first visit's view
  }
  select(first);
  roles();
  media.addEventListener("change", roles);
  return {
    narrow: () => media.matches,
    current: () => layout.dataset.view,
    select,
    mark,
    // A result shown where the learner sees it: no badge, nothing to reveal later.
    seen: () => {
      unseen = false;
      if (badge) badge.hidden = true;
    },
    wantResults: () => wantResults,
  };
}

// --------------------------------------------------------------------------- results

// After each result drawn in `results` (a new summary, #results not aria-busy): fn.
function onResult(results, fn) {
  let shown = null;
  let pending = false;
  const check = () => {
    pending = false;
    const summary = results.querySelector("[data-testid=summary]");
    if (!summary || summary === shown || results.getAttribute("aria-busy") === "true") return;
    shown = summary;
    fn(summary);
  };
  new MutationObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(check);
  }).observe(results, { childList: true, subtree: true, attributes: true, attributeFilter: ["aria-busy"] });
}

// Every results container (the problem page's dock, a submission's page): case names and error
// maps, each time something is drawn.
function watchResults(results) {
  const tidy = () => {
    for (const th of results.querySelectorAll("tr.case > th[scope=row]")) breakableName(th);
    for (const grid of results.querySelectorAll(".error-map-grid")) sizeErrorMap(grid);
  };
  new MutationObserver(tidy).observe(results, { childList: true, subtree: true });
  tidy();
}

// "weights_follow_updates" may wrap after each "_" (and "." or "/"), never inside a word: a
// <wbr> after each, in the name's own text node(s). Text stays text.
function breakableName(th) {
  if (th.dataset.wrapped) return;
  th.dataset.wrapped = "true";
  for (const node of [...th.childNodes]) {
    if (node.nodeType !== Node.TEXT_NODE || !/[_./]/.test(node.data)) continue;
    const pieces = node.data.split(/(?<=[_./])/);
    node.replaceWith(...pieces.flatMap((piece, i) => (i < pieces.length - 1 ? [piece, h("wbr", {})] : [piece])));
  }
}

// The map's rows and columns as CSS variables: layout.css sizes the cells from them (bounded:
// a 3×2 map stays small, a 64×64 one fits the dock). results.js may set them itself.
function sizeErrorMap(grid) {
  if (grid.style.getPropertyValue("--map-cols")) return;
  const found = /repeat\(\s*(\d+)/.exec(grid.style.gridTemplateColumns || "");
  const cols = found ? Number(found[1]) : 0;
  if (!cols) return;
  const rows = Math.ceil(grid.children.length / cols);
  grid.style.setProperty("--map-cols", String(cols));
  grid.style.setProperty("--map-rows", String(Math.max(rows, 1)));
}

// The first case that did not pass, with its message, diagnosis and hint, in view: in the dock
// (it scrolls on its own on a laptop) or on the page (below its sticky bars). Nothing moves when
// they are in view already; else the summary goes to the top if they fit under it, or the case.
function revealFirstFailing(results) {
  const row = results.querySelector("tr.case:not(.v-AC)");
  if (!row) return;
  const next = row.nextElementSibling;
  const detail = next && next.matches(".case-detail") ? next : row;
  const summary = results.querySelector("[data-testid=summary]") || row;
  const scroller = scrollParent(results);
  let top = 0;
  let bottom = window.innerHeight;
  if (scroller) {
    const box = scroller.getBoundingClientRect();
    top = box.top;
    bottom = box.bottom;
  } else {
    for (const bar of document.querySelectorAll(".narrow-tabs, .dock-head")) {
      const style = getComputedStyle(bar);
      if (style.position === "sticky" && style.display !== "none") top = Math.max(top, bar.getBoundingClientRect().bottom);
    }
  }
  const end = detail.getBoundingClientRect().bottom;
  const start = row.getBoundingClientRect().top;
  if (start >= top && end <= bottom) return;
  const head = summary.getBoundingClientRect().top;
  const by = (end - head <= bottom - top ? head : start) - top - 4;
  if (scroller) scroller.scrollTop += by;
  else window.scrollBy({ top: by });
}

function scrollParent(el) {
  for (let node = el.parentElement; node && node !== document.body; node = node.parentElement) {
    const overflow = getComputedStyle(node).overflowY;
    if ((overflow === "auto" || overflow === "scroll") && node.scrollHeight > node.clientHeight) return node;
  }
  return null;
}
