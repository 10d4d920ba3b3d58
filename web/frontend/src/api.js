// Calls to the JSON API with the session cookie and its CSRF token, and errors in plain words.
import { h } from "./dom.js";
import { siteLanguage, t } from "./i18n.js";

export class ApiError extends Error {
  constructor(status, code, message, retryAfter) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

// A session started in another tab has a new CSRF token: fetch it once and retry.
async function refreshCsrf() {
  try {
    const me = await request("GET", "/api/me");
    const meta = document.querySelector('meta[name="csrf-token"]');
    if (meta && me && me.csrf_token) meta.content = me.csrf_token;
    return Boolean(me && me.csrf_token);
  } catch (_err) {
    return false;
  }
}

export async function api(method, url, body) {
  try {
    return await request(method, url, body);
  } catch (err) {
    if (err instanceof ApiError && err.code === "csrf_failed" && (await refreshCsrf())) {
      return request(method, url, body);
    }
    throw err;
  }
}

async function request(method, url, body) {
  // The API's messages come in the page's language (the server reads Accept-Language first).
  const headers = { Accept: "application/json", "Accept-Language": siteLanguage() };
  if (method !== "GET") headers["X-CSRF-Token"] = csrfToken();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (_err) {
    throw new ApiError(0, "offline", t("Cannot reach the server. Check your connection; your code is kept in this browser."));
  }
  if (response.status === 204) return null;
  let data = null;
  try {
    data = await response.json();
  } catch (_err) {
    data = null;
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    const retry = Number(response.headers.get("Retry-After")) || null;
    // A body that is not the API's (a proxy's error page) has no message: say it in our words.
    const message = error.message || t("The server answered {status}. Try again in a moment.", { status: response.status });
    throw new ApiError(response.status, error.code || `http_${response.status}`, message, retry);
  }
  return data;
}

function loginLink() {
  const next = encodeURIComponent(location.pathname + location.search);
  return h("a", { href: `/login?next=${next}` }, t("Log in again"));
}

// What to tell the learner about a failed call: a paragraph, with a way forward where there is one.
export function explain(err) {
  if (!(err instanceof ApiError)) return h("span", {}, String(err));
  if (err.status === 401) {
    return h("span", {}, t("You are not logged in (your session may have expired). Your code is kept."), " ", loginLink());
  }
  if (err.status === 429) {
    const seconds = err.retryAfter || 60;
    return h("span", {}, t("Too many requests. Try again in {s} s; your code is kept.", { s: seconds }));
  }
  if (err.status === 403 && err.code === "csrf_failed") {
    return h("span", {}, t("This page is out of date. Reload it; your code is kept."));
  }
  if (err.status === 413) return h("span", {}, err.message, " ", t("Make it smaller and try again; your code is kept."));
  return h("span", {}, err.message);
}
