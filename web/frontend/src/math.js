// Statements carry math as text in .math.inline / .math.block (from the server's Markdown);
// KaTeX lays it out here. A formula KaTeX cannot parse stays readable as its source.
import katex from "katex";
import "katex/dist/katex.min.css";

export function renderMath(root) {
  for (const el of root.querySelectorAll(".math.inline, .math.block")) {
    const source = el.textContent.trim();
    try {
      katex.render(source, el, { displayMode: el.classList.contains("block"), throwOnError: false, output: "htmlAndMathml" });
    } catch (_err) {
      el.textContent = source;
    }
  }
}
