// A tiny element builder: h("p", {class: "x"}, "text", child). Text is always set as text,
// never as HTML, so learner output and messages cannot inject markup.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function pageData() {
  const el = document.getElementById("page-data");
  return el ? JSON.parse(el.textContent || "{}") : {};
}
