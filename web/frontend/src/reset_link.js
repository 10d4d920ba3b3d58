// A one-time password reset link, issued for an account by an admin (/admin) or by the
// instructor of a class it is in (/classes/{id}): shown once, in the banner of the
// `reset_link_banner` macro, with a copy button. The server keeps only the link's hash.
import { api } from "./api.js";
import { copyButton } from "./extras.js";
import { t } from "./i18n.js";
import { formatTime } from "./time.js";

export async function issueResetLink(button) {
  const link = await api("POST", `/api/users/${button.dataset.user}/reset-link`);
  const box = document.getElementById("reset-link");
  document.getElementById("reset-link-text").textContent = t(
    "A one-time link for {name}, working until {time}. It is shown only now: give it to them.",
    { name: button.dataset.name, time: formatTime(link.expires_at) },
  );
  document.getElementById("reset-link-url").textContent = link.url;
  box.hidden = false;
  box.scrollIntoView({ block: "nearest" });
}

// Every [data-copy] button copies its source element's text (selected where there is no clipboard).
export function bindCopyButtons(root = document) {
  for (const button of root.querySelectorAll("[data-copy]")) {
    const source = document.getElementById(button.dataset.copy);
    copyButton(button, () => source.textContent, source);
  }
}
