// Every date and time on the site goes through here, so they all read the same way: in the
// reader's own time zone, "2026-12-01 21:05" in both languages (the server renders the same
// shape in UTC, marked "UTC", for a page without script).
function pad(n) {
  return String(n).padStart(2, "0");
}

export function formatTime(iso) {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return String(iso);
  const day = `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}`;
  return `${day} ${pad(when.getHours())}:${pad(when.getMinutes())}`;
}
