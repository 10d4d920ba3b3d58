// `judge preview` only: the page carries a banner with the packages' version (web/preview).
// The page reloads itself when a file of the package changes, and lists the statement's
// formulas that KaTeX could not parse in the banner (they render as red source in the text).
import "./preview.css";

const POLL_MS = 700;

function banner() {
  return document.querySelector("[data-preview-version]");
}

async function pollVersion(shown) {
  // A small poll of the preview's own endpoint: no connection held open, nothing from elsewhere.
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    try {
      const res = await fetch("/preview/version", { cache: "no-store" });
      if (!res.ok) continue;
      const { version } = await res.json();
      if (version && version !== shown) {
        window.location.reload();
        return;
      }
    } catch (_err) {
      // The preview was stopped or is restarting: keep asking.
    }
  }
}

function listMathErrors(list) {
  const errors = document.querySelectorAll(".statement .katex-error");
  list.replaceChildren();
  for (const el of errors) {
    const item = document.createElement("li");
    item.textContent = `${list.dataset.label}: ${el.title || el.textContent}`;
    list.append(item);
  }
  list.hidden = errors.length === 0;
}

function whenReady(then) {
  // main.js lays out the math, then marks the body ready.
  if (document.body.dataset.ready) return then();
  const watch = new MutationObserver(() => {
    if (document.body.dataset.ready) {
      watch.disconnect();
      then();
    }
  });
  watch.observe(document.body, { attributes: true, attributeFilter: ["data-ready"] });
}

const shown = banner();
if (shown) {
  const list = shown.querySelector("[data-testid=preview-math-errors]");
  if (list) whenReady(() => listMathErrors(list));
  pollVersion(shown.dataset.previewVersion);
}
