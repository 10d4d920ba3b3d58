// The CodeMirror 6 Python editor: history, brackets closed as typed, search and replace,
// completion of torch names, a dark look when the system asks for one, a marked error line.
import {
  acceptCompletion,
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  completionKeymap,
} from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import {
  bracketMatching,
  defaultHighlightStyle,
  indentOnInput,
  indentUnit,
  syntaxHighlighting,
} from "@codemirror/language";
import { highlightSelectionMatches, search, searchKeymap } from "@codemirror/search";
import { Compartment, EditorState, Prec, StateEffect, StateField } from "@codemirror/state";
import {
  Decoration,
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { t } from "./i18n.js";
import { darkEditor, prefersDark } from "./editor_theme.js";
import { pythonKeywords, torchCompletions } from "./torch_complete.js";

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

// CodeMirror's own words (the search panel's, the completion list's), in the page's language.
function phrases() {
  return {
    Find: t("Find"),
    Replace: t("Replace"),
    next: t("next"),
    previous: t("previous"),
    all: t("all"),
    "match case": t("match case"),
    regexp: t("regexp"),
    "by word": t("by word"),
    replace: t("replace"),
    "replace all": t("replace all"),
    close: t("close"),
    "current match": t("current match"),
    "on line": t("on line"),
    "replaced $ matches": t("replaced $ matches"),
    "replaced match on line $": t("replaced match on line $"),
    "Go to line": t("Go to line"),
    go: t("go"),
    Completions: t("Completions"),
  };
}

const looks = (dark) => (dark ? darkEditor : syntaxHighlighting(defaultHighlightStyle, { fallback: true }));

export function createEditor(parent, doc, { onChange, onRun, onSubmit, readOnly = false, label } = {}) {
  const shortcuts = [];
  if (onRun) shortcuts.push({ key: "Mod-Enter", run: () => (onRun(), true) });
  if (onSubmit) shortcuts.push({ key: "Mod-Shift-Enter", run: () => (onSubmit(), true) });
  const look = new Compartment();
  const dark = prefersDark();
  const extensions = [
    lineNumbers(),
    highlightActiveLineGutter(),
    history(),
    drawSelection(),
    indentOnInput(),
    bracketMatching(),
    highlightActiveLine(),
    highlightSelectionMatches(),
    search({ top: true }),
    look.of(looks(dark.matches)),
    indentUnit.of("    "),
    python(),
    errorLine,
    EditorState.phrases.of(phrases()),
    // Our shortcuts before the defaults (Mod-Enter would otherwise insert a blank line).
    Prec.highest(keymap.of(shortcuts)),
    // No line wrapping: a wrapped Python line reads as two statements. Long lines scroll
    // sideways in .cm-scroller instead (a swipe on a phone).
    EditorView.contentAttributes.of({ "aria-label": label || "Python" }),
    EditorView.updateListener.of((update) => {
      if (update.docChanged && onChange) onChange(update.state.doc.toString());
    }),
  ];
  if (readOnly) {
    extensions.push(EditorState.readOnly.of(true), EditorView.editable.of(false), keymap.of([...defaultKeymap, ...searchKeymap]));
  } else {
    extensions.push(
      closeBrackets(),
      // Python's own sources (keywords, builtins, the document's names) come with python();
      // torch's modules and tensor methods, and the other keywords, are added beside them.
      EditorState.languageData.of(() => [{ autocomplete: torchCompletions }, { autocomplete: pythonKeywords }]),
      autocompletion({ icons: false }),
      keymap.of([
        ...closeBracketsKeymap,
        ...completionKeymap,
        { key: "Tab", run: acceptCompletion },
        ...searchKeymap,
        ...defaultKeymap,
        ...historyKeymap,
        indentWithTab,
      ]),
    );
  }
  const view = new EditorView({ state: EditorState.create({ doc, extensions }), parent });
  // Follow the system when it switches between light and dark while the page is open.
  dark.addEventListener?.("change", (event) => view.dispatch({ effects: look.reconfigure(looks(event.matches)) }));
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
