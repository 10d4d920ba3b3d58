// Admin actions: validate a package, rejudge a submission or a problem, reload problems; reset
// links, the registration mode and invite codes.
import { api, explain } from "./api.js";
import { t } from "./i18n.js";
import { bindCopyButtons, issueResetLink } from "./reset_link.js";
import { formatTime } from "./time.js";

export function initAdmin() {
  const message = document.getElementById("admin-message");
  const say = (...parts) => {
    message.replaceChildren(...parts);
    message.hidden = false;
  };

  async function waitForValidation(id) {
    for (;;) {
      const v = await api("GET", `/api/admin/validations/${id}`);
      if (v.status !== "running") return v;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  const actions = {
    async validate(button) {
      const record = await api("POST", `/api/admin/problems/${button.dataset.problem}/validate`);
      say(t("Validating problem {id}…", { id: button.dataset.problem }));
      const done = await waitForValidation(record.id);
      const outcome = { sound: t("Sound"), unsound: t("Unsound"), error: t("Error") }[done.status] || done.status;
      say(t("Problem {id}: {status}", { id: button.dataset.problem, status: outcome }));
      location.reload();
    },
    async "rejudge-problem"(button) {
      if (!window.confirm(t("Rejudge every submission to problem {id}?", { id: button.dataset.problem }))) return;
      const result = await api("POST", `/api/admin/problems/${button.dataset.problem}/rejudge`);
      say(t("{n} submissions queued for rejudging.", { n: result.queued }));
    },
    async rejudge(button) {
      const result = await api("POST", `/api/admin/submissions/${button.dataset.submission}/rejudge`);
      say(t("{n} submissions queued for rejudging.", { n: result.queued }));
    },
    // The page shows each account's state: reload it rather than redraw the row.
    async "disable-user"(button) {
      await api("POST", `/api/admin/users/${button.dataset.user}/disable`);
      location.reload();
    },
    async "enable-user"(button) {
      await api("POST", `/api/admin/users/${button.dataset.user}/enable`);
      location.reload();
    },
    // Shown once: the server keeps only the link's hash.
    "reset-link": issueResetLink,
    async "revoke-invite"(button) {
      await api("POST", `/api/admin/invites/${button.dataset.invite}/revoke`);
      location.reload();
    },
    async sync() {
      const result = await api("POST", "/api/admin/problems/sync");
      say(t("{n} problems loaded; new versions: {v}", { n: result.problems, v: result.new_versions.join(", ") || "—" }));
    },
  };

  // The reset link and the new invite code: copied, or selected where there is no clipboard.
  bindCopyButtons();

  // The registration mode and new invite codes: forms sent as JSON.
  const modeForm = document.getElementById("registration-mode");
  modeForm?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const mode = new FormData(modeForm).get("mode");
    try {
      await api("PUT", "/api/admin/registration", { mode });
      document.getElementById("registration-saved").hidden = false;
    } catch (err) {
      say(explain(err));
    }
  });
  const inviteForm = document.getElementById("new-invite");
  inviteForm?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(inviteForm);
    try {
      const made = await api("POST", "/api/admin/invites", {
        note: String(data.get("note") || ""),
        max_uses: Number(data.get("max_uses")),
        expires_in_days: Number(data.get("expires_in_days")),
      });
      document.getElementById("invite-code").textContent = made.code;
      document.getElementById("invite-created").hidden = false;
    } catch (err) {
      say(explain(err));
    }
  });

  document.addEventListener("click", async (event) => {
    const button = event.target.closest("[data-action]");
    if (!button || !actions[button.dataset.action]) return;
    button.disabled = true;
    try {
      await actions[button.dataset.action](button);
    } catch (err) {
      say(explain(err));
    } finally {
      button.disabled = false;
    }
  });
}
