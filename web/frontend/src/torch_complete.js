// Python's keywords (lang-python completes builtins, the code's own names and a few keyword
// snippets) and completion of torch names after a dot: `torch.`, `torch.nn.`, `F.` (and whatever the code
// imports under another name), a tensor's methods after any other expression, an nn.Module's
// members and the attributes the code sets after `self.`. The names are torch's own, listed
// by tools/torch_names.py into torch_names.json, so nothing is looked up at run time.
import { syntaxTree } from "@codemirror/language";
import names from "./torch_names.json";

// The names a learner's solution usually gives these modules, whether or not it imports them yet.
const USUAL = { torch: "torch", nn: "torch.nn", F: "torch.nn.functional", init: "torch.nn.init", linalg: "torch.linalg" };
const NO_COMPLETION = new Set(["String", "FormatString", "Comment", "Number"]);

const cache = new Map();
function optionsOf(key, table) {
  if (!cache.has(key)) {
    const options = [];
    for (const [kind, list] of Object.entries(table)) {
      for (const label of list.split(" ")) options.push({ label, type: names.kinds[kind] });
    }
    cache.set(key, options);
  }
  return cache.get(key);
}

// What each top-level name stands for: torch's modules under the names the code imports them.
function importedNames(text) {
  const found = { ...USUAL };
  const others = new Set();
  for (const match of text.matchAll(/^[ \t]*import[ \t]+([\w.]+)(?:[ \t]+as[ \t]+(\w+))?/gm)) {
    const [, path, alias] = match;
    if (alias) (names.modules[path] ? (found[alias] = path) : others.add(alias));
    else others.add(path.split(".")[0]);
  }
  for (const match of text.matchAll(/^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([^)\n]+)/gm)) {
    for (const part of match[2].split(",")) {
      const [name, alias] = part.trim().split(/\s+as\s+/);
      const path = `${match[1]}.${name}`;
      if (names.modules[path]) found[alias || name] = path;
      else if (name) others.add(alias || name);
    }
  }
  for (const name of Object.keys(found)) others.delete(name);
  return { modules: found, others };
}

function selfAttributes(text) {
  const seen = new Set();
  for (const match of text.matchAll(/\bself\.(\w+)\s*(?::[^=\n]*)?=(?!=)/g)) seen.add(match[1]);
  for (const match of text.matchAll(/^[ \t]+def[ \t]+(\w+)[ \t]*\([ \t]*self\b/gm)) seen.add(match[1]);
  return [...seen].map((label) => ({ label, type: "property", boost: 1 }));
}

function membersOf(object, text) {
  const { modules, others } = importedNames(text);
  const [head, ...rest] = object.split(".");
  if (modules[head]) {
    const path = [modules[head], ...rest].join(".");
    // torch.float32., torch.nn.Linear., torch.cuda.: not modules listed, nothing to offer
    return names.modules[path] ? optionsOf(path, names.modules[path]) : null;
  }
  if (others.has(head)) return null; // math., np. and other modules: not torch's
  if (object === "self") return [...selfAttributes(text), ...optionsOf("Module", names.classes.Module)];
  return optionsOf("Tensor", names.classes.Tensor);
}

export function torchCompletions(context) {
  const node = syntaxTree(context.state).resolveInner(context.pos, -1);
  if (NO_COMPLETION.has(node.name)) return null;
  const line = context.state.doc.lineAt(context.pos);
  const before = line.text.slice(0, context.pos - line.from);
  const dotted = /(^|[^\w.])([A-Za-z_]\w*(?:\.\w+)*)\.(\w*)$/.exec(before);
  const afterCall = dotted ? null : /[)\]]\.(\w*)$/.exec(before);
  if (!dotted && !afterCall) return null;
  const partial = dotted ? dotted[3] : afterCall[1];
  const text = context.state.doc.toString();
  const options = dotted ? membersOf(dotted[2], text) : optionsOf("Tensor", names.classes.Tensor);
  // A name typed in full ends the list: Enter after `self.weight` or `x.T` is a new line, not a
  // completion of something else that matches (hence no validFor: made again per keystroke).
  if (!options || options.some((option) => option.label === partial)) return null;
  return { from: context.pos - partial.length, options };
}

// Python's keywords that lang-python offers neither as globals nor as snippets (def, for, if...).
const KEYWORDS = (
  "and as assert async await break continue del elif else except finally global in is lambda " +
  "nonlocal not or pass raise return with yield match case"
).split(" ").map((label) => ({ label, type: "keyword" }));

export function pythonKeywords(context) {
  const word = context.matchBefore(/\w+$/);
  if (!word && !context.explicit) return null;
  const node = syntaxTree(context.state).resolveInner(context.pos, -1);
  if (NO_COMPLETION.has(node.name)) return null;
  const from = word ? word.from : context.pos;
  if (context.state.sliceDoc(from - 1, from) === ".") return null; // an attribute, not a keyword
  // As above: `pass` typed in full, then Enter, is a new line.
  const typed = word ? word.text : "";
  if (KEYWORDS.some((option) => option.label === typed)) return null;
  return { from, options: KEYWORDS };
}
