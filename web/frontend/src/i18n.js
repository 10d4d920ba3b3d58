// The page hands the script its translations (the "js" gettext domain) as JSON in #i18n.
// Message ids are the English text, so English pages carry an empty object.
let messages = null;

export function t(id, vars) {
  if (messages === null) {
    const el = document.getElementById("i18n");
    messages = el ? JSON.parse(el.textContent || "{}") : {};
  }
  let text = messages[id] || id;
  if (vars) text = text.replace(/\{(\w+)\}/g, (whole, key) => (key in vars ? String(vars[key]) : whole));
  return text;
}

export function pageLanguage() {
  return document.documentElement.lang || "zh-CN";
}

// The site's own code for the page language ("zh" or "en"), as the API's ?lang= takes it.
export function siteLanguage() {
  return pageLanguage().startsWith("en") ? "en" : "zh";
}
