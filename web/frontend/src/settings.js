// Settings: create an API token (shown once) and revoke tokens.
import { api, explain } from "./api.js";
import { h } from "./dom.js";
import { copyButton } from "./extras.js";
import { t } from "./i18n.js";
import { formatTime } from "./time.js";

// The leaderboard's name for the reader, and whether it lists them at all (PATCH /api/me).
function initBoardPresence() {
  const form = document.getElementById("board-presence");
  if (!form) return;
  const saved = document.getElementById("board-saved");
  const error = document.getElementById("board-error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    saved.hidden = error.hidden = true;
    try {
      const me = await api("PATCH", "/api/me", {
        display_name: form.elements.display_name.value.trim(),
        on_leaderboard: form.elements.on_leaderboard.checked,
      });
      form.elements.display_name.value = me.display_name || "";
      saved.hidden = false;
    } catch (err) {
      error.replaceChildren(explain(err));
      error.hidden = false;
    }
  });
}

// A token is shown once: a button copies it, and says so.
function initTokenCopy() {
  const button = document.getElementById("token-copy");
  const value = document.getElementById("token-value");
  if (button && value) copyButton(button, () => value.textContent, value);
}

export function initSettings() {
  initBoardPresence();
  initTokenCopy();
  const form = document.getElementById("new-token");
  const created = document.getElementById("token-created");
  const value = document.getElementById("token-value");
  const error = document.getElementById("token-error");
  const body = document.querySelector("#tokens tbody");

  const fail = (err) => {
    error.replaceChildren(explain(err));
    error.hidden = false;
  };

  async function revoke(button) {
    const row = button.closest("tr");
    if (!window.confirm(t("Revoke this token? Scripts and kits using it stop working."))) return;
    try {
      await api("DELETE", `/api/me/tokens/${button.dataset.revoke}`);
      row.remove();
    } catch (err) {
      fail(err);
    }
  }

  body.addEventListener("click", (event) => {
    const button = event.target.closest("[data-revoke]");
    if (button) revoke(button);
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    const name = form.elements.name.value.trim();
    try {
      const token = await api("POST", "/api/me/tokens", { name });
      const now = new Date().toISOString();
      value.textContent = token.token;
      created.hidden = false;
      const copy = document.getElementById("token-copy");
      if (copy) copy.textContent = t("Copy");
      body.querySelector("tr.empty")?.remove();
      body.append(
        h("tr", { "data-token": token.id },
          h("td", {}, token.name), h("td", {}, h("code", {}, `${token.token.slice(0, 10)}…`)),
          h("td", {}, h("time", { datetime: now }, formatTime(now))), h("td", {}, "—"),
          h("td", {}, h("time", { datetime: token.expires_at }, formatTime(token.expires_at))),
          h("td", {}, h("button", { class: "danger small", "data-revoke": token.id, "aria-label": `${t("Revoke")} ${token.name}` }, t("Revoke"))))
      );
    } catch (err) {
      fail(err);
    }
  });
}
