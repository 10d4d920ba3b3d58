// Classes: join with a code, make a class, give the instructor role (/classes); a class's code,
// members, assignments and extensions (/classes/{id}). Every form posts to the JSON API and the
// page is reloaded to show the result, so what is shown is always what the server has.
import { api, explain } from "./api.js";
import { t } from "./i18n.js";
import { bindCopyButtons, issueResetLink } from "./reset_link.js";

const CARRIED = "class-message"; // a message that survives the reload that shows the result

function pad(n) {
  return String(n).padStart(2, "0");
}

// A datetime-local value ("2026-12-04T14:30") is the reader's own clock: the API takes an
// instant with an offset, so it goes as UTC ("...Z").
export function localInputToIso(value) {
  const when = new Date(value);
  if (!value || Number.isNaN(when.getTime())) return null;
  return when.toISOString();
}

// And back: a stored UTC instant as the reader's own clock, for an input to edit.
export function isoToLocalInput(iso) {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return "";
  return `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}T${pad(when.getHours())}:${pad(when.getMinutes())}`;
}

function timeZoneName() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  } catch (_err) {
    return "";
  }
}

function messenger(id) {
  const box = document.getElementById(id);
  const say = (kind, ...parts) => {
    if (!box) return;
    box.className = `banner ${kind}`;
    box.replaceChildren(...parts);
    box.hidden = false;
    box.scrollIntoView({ block: "nearest" });
  };
  const carried = sessionStorage.getItem(CARRIED);
  if (carried) {
    sessionStorage.removeItem(CARRIED);
    say("success", carried);
  }
  return say;
}

function reloadSaying(text) {
  if (text) sessionStorage.setItem(CARRIED, text);
  location.reload();
}

// A form's submit runs `action`; an API error is shown, in the page's language, and the form
// keeps what was typed.
function onSubmit(form, say, action) {
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    try {
      await action(new FormData(form));
    } catch (err) {
      say("error", explain(err));
    } finally {
      if (button) button.disabled = false;
    }
  });
}

export function initClasses() {
  const say = messenger("classes-message");
  onSubmit(document.getElementById("join-class"), say, async (data) => {
    const joined = await api("POST", "/api/classes/join", { code: String(data.get("code") || "") });
    location.assign(`/classes/${joined.id}`);
  });
  onSubmit(document.getElementById("create-class"), say, async (data) => {
    const made = await api("POST", "/api/classes", { name: String(data.get("name") || "").trim() });
    location.assign(`/classes/${made.id}`);
  });
  onSubmit(document.getElementById("set-role"), say, async (data) => {
    const name = String(data.get("username") || "").trim().toLowerCase();
    const users = await api("GET", "/api/admin/users");
    const found = users.find((u) => u.username.toLowerCase() === name);
    if (!found) {
      say("error", t("No account is called {name}.", { name: data.get("username") }));
      return;
    }
    const role = String(data.get("role"));
    const set = await api("POST", `/api/admin/users/${found.id}/role`, { role });
    say("success", t("{name} is now: {role}", { name: set.username, role: role === "instructor" ? t("Instructor") : t("Learner") }));
  });
}

function namesIn(text) {
  return text.split(/[\n,;]+/).map((n) => n.trim()).filter(Boolean);
}

export function initClass(data) {
  const say = messenger("class-message");
  const base = `/api/classes/${data.class_id}`;
  const zone = document.querySelector("[data-time-zone]");
  if (zone) zone.textContent = timeZoneName() || t("this computer's");
  const form = document.getElementById("assignment-form");
  const heading = document.getElementById("assignment-form-heading");

  const fillForm = (a) => {
    form.elements.id.value = a ? a.id : "";
    form.elements.title.value = a ? a.title : "";
    form.elements.problems.value = a ? a.problems.join(", ") : "";
    form.elements.opens.value = a ? isoToLocalInput(a.opens_at) : "";
    form.elements.due.value = a ? isoToLocalInput(a.due_at) : "";
    form.elements.late_counts.checked = Boolean(a && a.late_counts);
    heading.textContent = a ? heading.dataset.edit : heading.dataset.new;
    form.querySelector("[data-action=cancel-edit]").hidden = !a;
  };

  const actions = {
    async "new-code"() {
      if (!window.confirm(t("Make a new join code? The current one stops working."))) return;
      await api("POST", `${base}/code`);
      reloadSaying(t("A new join code is set."));
    },
    async "close-joining"() {
      await api("PATCH", base, { joining_open: false });
      reloadSaying(t("Joining by code is closed."));
    },
    async "open-joining"() {
      await api("PATCH", base, { joining_open: true });
      reloadSaying(t("Joining by code is open."));
    },
    // A learner who forgot their password: a one-time link, shown once, to give them.
    "reset-link": issueResetLink,
    async "remove-member"(button) {
      if (!window.confirm(t("Remove {name} from the class?", { name: button.dataset.name }))) return;
      await api("DELETE", `${base}/members/${button.dataset.user}`);
      reloadSaying(t("{name} was removed.", { name: button.dataset.name }));
    },
    async "edit-assignment"(button) {
      const a = data.assignments.find((x) => String(x.id) === button.dataset.assignment);
      fillForm(a);
      form.scrollIntoView({ block: "start" });
      form.elements.title.focus();
    },
    async "cancel-edit"() {
      fillForm(null);
    },
    async "delete-assignment"(button) {
      if (!window.confirm(t("Delete the assignment {title}?", { title: button.dataset.title }))) return;
      await api("DELETE", `${base}/assignments/${button.dataset.assignment}`);
      reloadSaying(t("The assignment was deleted."));
    },
    async "remove-extension"(button) {
      await api("DELETE", `${base}/assignments/${button.dataset.assignment}/extensions/${button.dataset.user}`);
      reloadSaying(t("The extension was removed."));
    },
  };

  bindCopyButtons();
  document.addEventListener("click", async (event) => {
    const button = event.target.closest("[data-action]");
    if (!button || !actions[button.dataset.action]) return;
    button.disabled = true;
    try {
      await actions[button.dataset.action](button);
    } catch (err) {
      say("error", explain(err));
    } finally {
      button.disabled = false;
    }
  });

  onSubmit(document.getElementById("add-members"), say, async (fields) => {
    const file = fields.get("csv");
    const csv = file && file.size ? await file.text() : "";
    const added = await api("POST", `${base}/members`, { names: namesIn(String(fields.get("names") || "")), csv });
    const parts = [t("Added: {names}", { names: added.added.join(", ") || "—" })];
    if (added.already.length) parts.push(t("already in the class: {names}", { names: added.already.join(", ") }));
    reloadSaying(parts.join("; "));
  });

  onSubmit(form, say, async (fields) => {
    const opens = localInputToIso(String(fields.get("opens") || ""));
    const due = localInputToIso(String(fields.get("due") || ""));
    if (!opens || !due) {
      say("error", t("Give both times."));
      return;
    }
    const body = {
      title: String(fields.get("title") || "").trim(),
      problems: String(fields.get("problems") || "").split(/[\s,;]+/).filter(Boolean),
      opens_at: opens,
      due_at: due,
      late_counts: fields.get("late_counts") === "on",
    };
    const id = String(fields.get("id") || "");
    if (id) await api("PUT", `${base}/assignments/${id}`, body);
    else await api("POST", `${base}/assignments`, body);
    reloadSaying(id ? t("The assignment was saved.") : t("The assignment was created."));
  });

  for (const ext of document.querySelectorAll("form.extension-form")) {
    onSubmit(ext, say, async (fields) => {
      const due = localInputToIso(String(fields.get("due") || ""));
      if (!due) {
        say("error", t("Give the new due time."));
        return;
      }
      await api("PUT", `${base}/assignments/${ext.dataset.assignment}/extensions/${fields.get("user")}`, { due_at: due });
      reloadSaying(t("The extension was given."));
    });
  }

  onSubmit(document.getElementById("leave-class"), say, async () => {
    if (!window.confirm(t("Leave this class?"))) return;
    await api("POST", `${base}/leave`);
    location.assign("/classes");
  });
}
