// The CodeMirror 6 Python editor: history, brackets, indentation, and a marked error line.
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { bracketMatching, defaultHighlightStyle, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { EditorState, Prec, StateEffect, StateField } from "@codemirror/state";
import {
  Decoration,
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from "@codemirror/view";

const setErrorLine = StateEffect.define();

// The line a compile or runtime error points at, shown until the code changes.
const errorLine = StateField.define({
  create: () => Decoration.none,
  update(marks, tr) {
    if (tr.docChanged) marks = Decoration.none;
    for (const effect of tr.effects) {
      if (!effect.is(setErrorLine)) continue;
      if (effect.value === null) {
        marks = Decoration.none;
      } else {
        const line = tr.state.doc.line(effect.value);
        marks = Decoration.set([Decoration.line({ class: "cm-error-line", attributes: { "data-error-line": String(effect.value) } }).range(line.from)]);
      }
    }
    return marks;
  },
  provide: (field) => EditorView.decorations.from(field),
});

export function createEditor(parent, doc, { onChange, onRun, onSubmit, readOnly = false, label } = {}) {
  const shortcuts = [];
  if (onRun) shortcuts.push({ key: "Mod-Enter", run: () => (onRun(), true) });
  if (onSubmit) shortcuts.push({ key: "Mod-Shift-Enter", run: () => (onSubmit(), true) });
  const extensions = [
    lineNumbers(),
    highlightActiveLineGutter(),
    history(),
    drawSelection(),
    indentOnInput(),
    bracketMatching(),
    highlightActiveLine(),
    syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
    indentUnit.of("    "),
    python(),
    errorLine,
    // Our shortcuts before the defaults (Mod-Enter would otherwise insert a blank line).
    Prec.highest(keymap.of(shortcuts)),
    keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
    EditorView.lineWrapping,
    EditorView.contentAttributes.of({ "aria-label": label || "Python" }),
    EditorView.updateListener.of((update) => {
      if (update.docChanged && onChange) onChange(update.state.doc.toString());
    }),
  ];
  if (readOnly) extensions.push(EditorState.readOnly.of(true), EditorView.editable.of(false));
  const view = new EditorView({ state: EditorState.create({ doc, extensions }), parent });
  const handle = {
    view,
    getCode: () => view.state.doc.toString(),
    setCode(code) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code } });
    },
    markLine(lineNumber) {
      if (!lineNumber || lineNumber < 1 || lineNumber > view.state.doc.lines) return false;
      const line = view.state.doc.line(lineNumber);
      view.dispatch({
        effects: [setErrorLine.of(lineNumber), EditorView.scrollIntoView(line.from, { y: "center" })],
        selection: { anchor: line.from },
      });
      return true;
    },
    clearMark() {
      view.dispatch({ effects: setErrorLine.of(null) });
    },
    focus: () => view.focus(),
  };
  // The holder element knows its editor: browser tests (and extensions) read the exact text
  // here, as CodeMirror renders only the lines in view.
  parent.editor = handle;
  return handle;
}
