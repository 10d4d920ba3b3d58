// Settings: create an API token (shown once) and revoke tokens.
import { api, explain } from "./api.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { formatTime } from "./time.js";

export function initSettings() {
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
