/* gradviz's program editor on the Streamlit page (st.components.v2): CodeMirror 6 with Python
   highlighting and line numbers, the run's error marked where it happened (underline, gutter
   marker, its message on hover and below the line), the line of the node clicked in the graph
   highlighted, and Ctrl+Enter / Cmd+Enter (or the Run program button) to run.

   This is the source: scripts/build_code_editor.sh bundles it with CodeMirror into
   code_editor.min.js, the file the page loads (MIT licences in codemirror.LICENSE).

   The page's data: text (the program the editor should hold: changed by the server on a preset
   or a share link), source (the program that ran), error {line, col, message} and picked
   {line, text, title} (each sent as JSON text: see unwired), each for `source` and shown only
   while the editor holds that program's line, dark, height. A run sends the trigger "run"
   with the editor's text; the page keeps it where its plain text area keeps the program.
   While the editor is on the page its plain text area (the fallback, in the container
   .st-key-plain_program) is hidden. */
import { Compartment, EditorState, StateEffect, StateField, Prec, RangeSet } from "@codemirror/state";
import {
  EditorView, Decoration, WidgetType, GutterMarker, keymap, lineNumbers, gutter,
  highlightActiveLineGutter, drawSelection,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import {
  syntaxHighlighting, defaultHighlightStyle, indentOnInput, bracketMatching, indentUnit,
} from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { oneDark } from "@codemirror/theme-one-dark";

const HIDE_ID = "gv-editor-hides-plain";
const colours = new Compartment();  // light or dark, as the page's theme
const palette = (dark) => (dark ? oneDark : syntaxHighlighting(defaultHighlightStyle));
const HIDE_CSS = ".st-key-plain_program { display: none !important; }";

/* --- the run's error: an underline, a gutter marker, the message on hover and below --- */
const setError = StateEffect.define();

class ErrorBelow extends WidgetType {
  constructor(text) { super(); this.text = text; }
  eq(other) { return other.text === this.text; }
  toDOM() {
    const el = document.createElement("div");
    el.className = "cm-gv-error-message";
    el.textContent = this.text;  // text, never HTML: the message quotes the program
    return el;
  }
}

class ErrorMarker extends GutterMarker {
  constructor(text) { super(); this.text = text; }
  eq(other) { return other.text === this.text; }
  toDOM() {
    const el = document.createElement("span");
    el.className = "cm-gv-error-marker";
    el.textContent = "●";
    el.title = this.text;
    return el;
  }
}

function errorDecorations(doc, error) {
  if (!error) { return { marks: Decoration.none, gutter: RangeSet.empty }; }
  const line = doc.line(error.line);
  const start = Math.min(line.from + Math.max(error.col - 1, 0), line.to);
  let end = start;
  while (end < line.to && /\w/.test(doc.sliceString(end, end + 1))) { end++; }
  if (end === start && end < line.to) { end++; }
  const text = `Line ${error.line}, column ${error.col}: ${error.message}`;
  const ranges = [Decoration.line({ class: "cm-gv-error-line" }).range(line.from)];
  if (end > start) {
    ranges.push(Decoration.mark({ class: "cm-gv-error", attributes: { title: text } }).range(start, end));
  } else {  // at the end of the line: a caret that can be pointed at
    ranges.push(Decoration.widget({ widget: new ErrorCaret(text), side: 1 }).range(start));
  }
  ranges.push(Decoration.widget({ widget: new ErrorBelow(text), block: true, side: 1 }).range(line.to));
  return {
    marks: Decoration.set(ranges, true),
    gutter: RangeSet.of([new ErrorMarker(text).range(line.from)]),
  };
}

class ErrorCaret extends WidgetType {
  constructor(text) { super(); this.text = text; }
  eq(other) { return other.text === this.text; }
  toDOM() {
    const el = document.createElement("span");
    el.className = "cm-gv-error cm-gv-error-caret";
    el.title = this.text;
    el.textContent = " ";
    return el;
  }
}

const errorField = StateField.define({
  create() { return { marks: Decoration.none, gutter: RangeSet.empty }; },
  update(value, tr) {
    for (const e of tr.effects) {
      if (e.is(setError)) { return errorDecorations(tr.state.doc, e.value); }
    }
    if (!tr.docChanged) { return value; }
    // an edit on the error's line takes its mark away: the message no longer describes it
    let touched = false;
    value.gutter.between(0, tr.startState.doc.length, (from) => {
      const line = tr.startState.doc.lineAt(from);
      tr.changes.iterChangedRanges((a, b) => { if (a <= line.to && b >= line.from) { touched = true; } });
    });
    if (touched) { return { marks: Decoration.none, gutter: RangeSet.empty }; }
    return { marks: value.marks.map(tr.changes), gutter: value.gutter.map(tr.changes) };
  },
  provide: (f) => EditorView.decorations.from(f, (v) => v.marks),
});

const errorGutter = gutter({
  class: "cm-gv-error-gutter",
  markers: (view) => view.state.field(errorField).gutter,
});

/* --- the line of the node clicked in the graph --- */
const setPicked = StateEffect.define();
const pickedField = StateField.define({
  create() { return Decoration.none; },
  update(value, tr) {
    for (const e of tr.effects) {
      if (e.is(setPicked)) {
        if (!e.value) { return Decoration.none; }
        const line = tr.state.doc.line(e.value.line);
        return Decoration.set([
          Decoration.line({
            class: "cm-gv-picked",
            attributes: { title: `Clicked in the graph: ${e.value.title}` },
          }).range(line.from),
        ]);
      }
    }
    return value.map(tr.changes);
  },
  provide: (f) => EditorView.decorations.from(f),
});

const gvTheme = EditorView.theme({
  "&": { fontSize: "14px", border: "1px solid rgba(128, 128, 128, 0.35)", borderRadius: "0.5rem" },
  "&.cm-focused": { outline: "2px solid rgba(255, 75, 75, 0.6)" },
  ".cm-scroller": { fontFamily: "'Source Code Pro', ui-monospace, monospace", overflow: "auto" },
  ".cm-gv-error": {
    textDecoration: "underline wavy #e5484d", textDecorationSkipInk: "none", textUnderlineOffset: "3px",
  },
  ".cm-gv-error-caret": { display: "inline-block", width: "0.6em", borderBottom: "2px solid #e5484d" },
  ".cm-gv-error-line": { backgroundColor: "rgba(229, 72, 77, 0.10)" },
  ".cm-gv-error-message": {
    color: "#e5484d", fontSize: "12px", padding: "1px 6px 3px", whiteSpace: "pre-wrap",
    fontFamily: "'Source Sans Pro', sans-serif",
  },
  ".cm-gv-error-gutter": { width: "14px" },
  ".cm-gv-error-marker": { color: "#e5484d", cursor: "default", paddingLeft: "3px" },
  ".cm-gv-picked": { backgroundColor: "rgba(255, 190, 0, 0.28)", boxShadow: "inset 3px 0 0 #f5a300" },
});

function findLine(doc, want) {
  // the line `want.line` of the program that ran, if the editor still holds it there
  if (!want || !Number.isInteger(want.line) || want.line < 1 || want.line > doc.lines) { return null; }
  if (typeof want.text === "string" && doc.line(want.line).text !== want.text) { return null; }
  return want;
}

function toolbar(parent) {
  const bar = document.createElement("div");
  bar.className = "gv-editor-bar";
  bar.style.cssText = "display:flex;align-items:center;gap:0.75rem;margin-top:0.5rem;flex-wrap:wrap";
  const run = document.createElement("button");
  run.type = "button";
  run.className = "gv-run";
  run.textContent = "▶ Run program";
  run.setAttribute("aria-label", "Run program");
  run.style.cssText = "background:var(--st-primary-color, #ff4b4b);color:#fff;border:0;" +
    "border-radius:0.5rem;padding:0.35rem 0.85rem;font:inherit;cursor:pointer;white-space:nowrap";
  const tip = document.createElement("span");
  tip.textContent = "or Ctrl+Enter (⌘+Enter)";
  tip.style.cssText = "font-size:0.8rem;opacity:0.65";
  bar.append(run, tip);
  parent.appendChild(bar);
  return run;
}

function build(root, data, send) {
  const host = document.createElement("div");
  host.className = "gv-editor";
  window.gvEditorBuilds = (window.gvEditorBuilds || 0) + 1;  // the tests see it kept over reruns
  root.appendChild(host);
  const runKeys = [
    { key: "Mod-Enter", run: (v) => { send(v); return true; }, preventDefault: true },
    { key: "Ctrl-Enter", run: (v) => { send(v); return true; }, preventDefault: true },
    { key: "Meta-Enter", run: (v) => { send(v); return true; }, preventDefault: true },
  ];
  const view = new EditorView({
    parent: host,
    state: EditorState.create({
      doc: data.text || "",
      extensions: [
        Prec.highest(keymap.of(runKeys)),
        lineNumbers(), errorGutter, highlightActiveLineGutter(), history(), drawSelection(),
        indentOnInput(), bracketMatching(), indentUnit.of("    "),
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        python(), colours.of(palette(!!data.dark)),
        errorField, pickedField, gvTheme, EditorView.lineWrapping,
        EditorView.contentAttributes.of({ "aria-label": "Program" }),
        EditorView.theme({ "&": { height: data.height + "px" } }),
      ],
    }),
  });
  const run = toolbar(root);
  run.addEventListener("click", () => send(view));
  return view;
}

const views = new WeakMap();  // the component's element -> {view, text, marks}

// The error's place and the clicked line come as JSON text: Streamlit looks for a dataframe in
// each nested object of a component's data, and that look loads pandas into the server.
const parsed = (value) => (typeof value === "string" ? JSON.parse(value) : value ?? null);
const unwired = (data) => ({ ...data, error: parsed(data.error), picked: parsed(data.picked) });

export default function (component) {
  const { setTriggerValue, parentElement } = component;
  const data = unwired(component.data);
  if (!document.getElementById(HIDE_ID)) {
    const style = document.createElement("style");
    style.id = HIDE_ID;
    style.textContent = HIDE_CSS;
    document.head.appendChild(style);
  }
  let entry = views.get(parentElement);
  if (!entry) {
    const fresh = { view: null, text: data.text, marks: null, trigger: setTriggerValue };
    fresh.view = build(parentElement, data, (view) => {
      const text = view.state.doc.toString();
      fresh.text = text;  // the page's answer holds this text: not put back over typing
      fresh.trigger("run", { text: text, at: Date.now() });
    });
    views.set(parentElement, fresh);
    entry = fresh;
    entry.dark = !!data.dark;
  }
  entry.trigger = setTriggerValue;
  const view = entry.view;
  if (entry.dark !== !!data.dark) {  // the visitor switched the page's theme
    entry.dark = !!data.dark;
    view.dispatch({ effects: colours.reconfigure(palette(entry.dark)) });
  }
  if (data.text !== entry.text) {  // the server put another program in (preset, share link)
    entry.text = data.text;
    if (view.state.doc.toString() !== data.text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: data.text } });
    }
  }
  // The marks are set when the page's answer about them changes, for the program that ran,
  // at the lines the editor still holds as they ran.
  const marks = JSON.stringify([data.source, data.error, data.picked]);
  if (marks !== entry.marks) {
    entry.marks = marks;
    const same = view.state.doc.toString() === data.source;
    const error = same && data.error && findLine(view.state.doc, data.error) ? data.error : null;
    const picked = findLine(view.state.doc, data.picked);
    view.dispatch({ effects: [setError.of(error), setPicked.of(picked)] });
    if (picked) {  // into the editor's view, without scrolling the page
      const block = view.lineBlockAt(view.state.doc.line(picked.line).from);
      const scroller = view.scrollDOM;
      if (block.top < scroller.scrollTop || block.bottom > scroller.scrollTop + scroller.clientHeight) {
        scroller.scrollTop = Math.max(block.top - scroller.clientHeight / 3, 0);
      }
    }
  }
  return () => {
    // Taken off the page (the plain editor chosen): the text area shows again.
    setTimeout(() => {
      if (!parentElement.isConnected) { views.delete(parentElement); }
      if (!document.querySelector(".gv-editor")) { document.getElementById(HIDE_ID)?.remove(); }
    }, 0);
  };
}
