// The language switch is a form that reloads the page: what the reader had typed into the page's
// other fields (a username, a token's name, a scratch input) is carried over in sessionStorage
// and put back on the page the switch returns to. Passwords and hidden fields are never kept.
// (The problem editor keeps its own draft; CodeMirror's text is no form field.)
const KEY = "llm-judge:typed";
const SWITCH = 'form[action="/lang"]';

function fields() {
  return [...document.querySelectorAll("input, textarea, select")].filter(
    (el) =>
      !el.closest(SWITCH) &&
      !el.closest(".cm-editor") &&
      (el.id || el.name) &&
      !["password", "hidden", "file", "submit", "button", "reset", "image"].includes(el.type)
  );
}

// A field's address on its page: its form (by id or action) and its own id or name.
function address(el) {
  const form = el.form;
  const where = form ? form.id || form.getAttribute("action") || "form" : "page";
  return `${where}#${el.id || el.name}${el.type === "radio" ? `=${el.value}` : ""}`;
}

function save() {
  const typed = {};
  for (const el of fields()) {
    if (el.type === "checkbox" || el.type === "radio") typed[address(el)] = el.checked;
    else if (el.value !== el.defaultValue || el.tagName === "SELECT") typed[address(el)] = el.value;
  }
  try {
    sessionStorage.setItem(KEY, JSON.stringify({ path: location.pathname, typed }));
  } catch (_err) {
    // Storage disabled: the switch still works; only the typing is lost.
  }
}

function restore() {
  let kept = null;
  try {
    kept = JSON.parse(sessionStorage.getItem(KEY) || "null");
    sessionStorage.removeItem(KEY);
  } catch (_err) {
    return;
  }
  if (!kept || kept.path !== location.pathname || !kept.typed) return;
  for (const el of fields()) {
    const value = kept.typed[address(el)];
    if (value === undefined) continue;
    if (el.type === "checkbox" || el.type === "radio") el.checked = Boolean(value);
    else el.value = value;
  }
}

export function keepTypedAcrossLanguageSwitch() {
  restore();
  document.addEventListener("submit", (event) => {
    if (event.target instanceof HTMLFormElement && event.target.matches(SWITCH)) save();
  });
}
