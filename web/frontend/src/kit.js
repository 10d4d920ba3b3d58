// The practice kit's download on the problem list. The first download after a start (or after
// the problems changed) waits for the server to build the kit: say how far it got, then download.
import { api } from "./api.js";
import { t } from "./i18n.js";

const POLL_MS = 1000;

export function initKit() {
  const form = document.querySelector("form[data-kit-form]");
  if (!form) return;
  const status = form.querySelector(".kit-status");
  const button = form.querySelector("button[type=submit]");
  const say = (text) => {
    status.textContent = text;
    status.hidden = !text;
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (button.disabled) return;
    button.disabled = true;
    try {
      for (;;) {
        const state = await api("GET", "/api/kit/status");
        if (state.ready) break;
        if (state.failed) {
          say(t("The practice kit could not be built: {why}", { why: state.failed }));
          return;
        }
        say(
          state.total
            ? t("Preparing the practice kit: {done} of {total} problems…", { done: state.done, total: state.total })
            : t("Preparing the practice kit…"),
        );
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      say(t("The practice kit is ready; it is downloading."));
      const query = new URLSearchParams(new FormData(form)).toString();
      window.location.assign(form.action + (query ? `?${query}` : ""));
    } catch (_err) {
      form.submit(); // the plain download, which waits for the build
    } finally {
      button.disabled = false;
    }
  });
}
