// The editor's dark look, used when the system prefers dark (theme.css darkens the page).
// Colours keep at least 4.5:1 contrast on the editor's background (#1b1e23).
import { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { EditorView } from "@codemirror/view";
import { tags } from "@lezer/highlight";

export function prefersDark() {
  return window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : { matches: false };
}

const darkHighlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.controlKeyword, tags.definitionKeyword, tags.moduleKeyword, tags.operatorKeyword], color: "#d2a8ff" },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: "#a5d6a7" },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: "#ffab70" },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: "#9aa5b1", fontStyle: "italic" },
  { tag: [tags.function(tags.variableName), tags.function(tags.definition(tags.variableName))], color: "#82b1ff" },
  { tag: [tags.definition(tags.variableName)], color: "#e6edf3" },
  { tag: [tags.className, tags.definition(tags.className), tags.typeName], color: "#ffd479" },
  { tag: [tags.propertyName, tags.function(tags.propertyName)], color: "#79c0ff" },
  { tag: [tags.self, tags.special(tags.variableName)], color: "#ff9e9e" },
  { tag: [tags.operator, tags.punctuation, tags.bracket], color: "#c9d1d9" },
  { tag: tags.invalid, color: "#ff7b72" },
]);

const darkChrome = EditorView.theme(
  {
    "&": { backgroundColor: "#1b1e23", color: "#e6edf3" },
    ".cm-content": { caretColor: "#e6edf3" },
    ".cm-cursor, .cm-dropCursor": { borderLeftColor: "#e6edf3" },
    "&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, ::selection": {
      backgroundColor: "#2f4b6e",
    },
    ".cm-gutters": { backgroundColor: "#1b1e23", color: "#8b949e", borderRight: "1px solid #30363d" },
    ".cm-activeLine": { backgroundColor: "#ffffff0d" },
    ".cm-activeLineGutter": { backgroundColor: "#ffffff14", color: "#e6edf3" },
    ".cm-selectionMatch": { backgroundColor: "#3a4a5f" },
    ".cm-searchMatch": { backgroundColor: "#6b5a1e", outline: "1px solid #b08f2e" },
    ".cm-searchMatch.cm-searchMatch-selected": { backgroundColor: "#8a4b12" },
    "&.cm-focused .cm-matchingBracket": { backgroundColor: "#3b5070" },
    ".cm-panels": { backgroundColor: "#22262c", color: "#e6edf3" },
    ".cm-panels.cm-panels-top": { borderBottom: "1px solid #30363d" },
    ".cm-textfield": { backgroundColor: "#0f1115", color: "#e6edf3", border: "1px solid #5b6470" },
    ".cm-button": { backgroundImage: "none", backgroundColor: "#2d333b", color: "#e6edf3", border: "1px solid #5b6470" },
    ".cm-tooltip": { backgroundColor: "#22262c", color: "#e6edf3", border: "1px solid #30363d" },
    ".cm-tooltip-autocomplete > ul > li[aria-selected]": { backgroundColor: "#2f4b6e", color: "#ffffff" },
    ".cm-completionDetail": { color: "#9aa5b1" },
  },
  { dark: true },
);

export const darkEditor = [darkChrome, syntaxHighlighting(darkHighlight)];
