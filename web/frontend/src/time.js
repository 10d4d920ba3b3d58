// Every date and time on the site goes through here, so they all read the same way.
import { pageLanguage } from "./i18n.js";

export function formatTime(iso) {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return String(iso);
  return when.toLocaleString(pageLanguage());
}
