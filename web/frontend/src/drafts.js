// Drafts kept in this browser, one set per account (and one for a visitor): every edit lands
// here first, so a failed save (offline, an expired session, a rate limit) loses nothing. At
// log-out the account's unsynced drafts go to the server and every draft leaves the browser: on
// a shared computer the next person must not open the last one's code.
import { api } from "./api.js";

const PREFIX = "llm-judge:draft:";
const GUEST = "guest";
// Before drafts had an owner they were kept as PREFIX + problem id: nobody's, so they go.
const UNOWNED = /^llm-judge:draft:\d+$/;
const LOGOUT_PUSH_MS = 3000; // at most this long between the click and the log-out
let loggingOut = false; // from then on nothing is written: a save still in flight must not bring a draft back

function owner(userId) {
  return userId === null || userId === undefined ? GUEST : `u${userId}`;
}

function key(userId, problemId) {
  return `${PREFIX}${owner(userId)}:${problemId}`;
}

function storedKeys() {
  try {
    return Object.keys(localStorage).filter((k) => k.startsWith(PREFIX));
  } catch (_err) {
    return [];
  }
}

function read(fullKey) {
  try {
    return JSON.parse(localStorage.getItem(fullKey) || "null");
  } catch (_err) {
    return null;
  }
}

function remove(fullKey) {
  try {
    localStorage.removeItem(fullKey);
  } catch (_err) {
    // Storage disabled: there is nothing to remove.
  }
}

// {code, synced, at} of this account's draft of a problem, or null.
export function readDraft(userId, problemId) {
  return read(key(userId, problemId));
}

export function writeDraft(userId, problemId, code, synced) {
  if (loggingOut) return;
  try {
    localStorage.setItem(key(userId, problemId), JSON.stringify({ code, synced, at: Date.now() }));
  } catch (_err) {
    // Storage full or disabled: the server copy still works.
  }
}

// What a visitor typed before logging in, handed to the account that logged in (once): the
// learner who writes first and logs in to run expects to find their code.
export function takeGuestDraft(problemId) {
  const draft = read(key(null, problemId));
  remove(key(null, problemId));
  return draft;
}

function dropUnowned() {
  for (const k of storedKeys()) if (UNOWNED.test(k)) remove(k);
}

async function pushUnsynced() {
  const me = await api("GET", "/api/me");
  const mine = `${PREFIX}${owner(me.id)}:`;
  const pending = storedKeys()
    .filter((k) => k.startsWith(mine))
    .map((k) => [k.slice(mine.length), read(k)])
    .filter(([, draft]) => draft && !draft.synced && typeof draft.code === "string");
  await Promise.allSettled(
    pending.map(([problemId, draft]) => api("PUT", `/api/problems/${problemId}/draft`, { code: draft.code }))
  );
}

function clearAll() {
  for (const k of storedKeys()) remove(k);
}

// Every page: the log-out form (in the site header) first saves and clears this browser's drafts.
export function guardLogout() {
  dropUnowned();
  for (const form of document.querySelectorAll('form[action="/logout"]')) {
    form.addEventListener("submit", async (event) => {
      if (form.dataset.draftsCleared === "true") return;
      event.preventDefault();
      // Every edit is in storage at once (the server gets it after a pause): unsynced ones go now.
      loggingOut = true;
      const timeout = new Promise((resolve) => setTimeout(resolve, LOGOUT_PUSH_MS));
      try {
        await Promise.race([pushUnsynced(), timeout]);
      } catch (_err) {
        // Not saved to the server (offline, session gone): log-out still clears the browser.
      }
      clearAll();
      form.dataset.draftsCleared = "true";
      form.requestSubmit ? form.requestSubmit() : form.submit();
    });
  }
}
