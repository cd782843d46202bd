import { autocompletion, closeBrackets, closeCompletion, completionKeymap } from '@codemirror/autocomplete';
import {
  bracketMatching,
  defaultHighlightStyle,
  indentOnInput,
  syntaxHighlighting,
} from '@codemirror/language';
import { sql, type SQLNamespace } from '@codemirror/lang-sql';
import { Compartment, EditorSelection, EditorState, Prec } from '@codemirror/state';
import {
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
  placeholder,
} from '@codemirror/view';
import { MindsDbSql } from './dialect';
import { statementAt } from './logic';

export type SqlEditor = {
  readonly view: EditorView;
  /** Closes the completion popup (a run does). */
  closeCompletion(): void;
  /** The selection if any, else the statement under the cursor. */
  currentStatement(): string | undefined;
  /** Puts a statement on a line of its own after the cursor's statement and selects it. */
  insertStatement(sql: string): void;
  setText(text: string): void;
  setSchema(schema: SQLNamespace): void;
};

/** Enter keeps the current line's indentation (no @codemirror/commands in the toolchain: ours is enough). */
const newline = (view: EditorView) => {
  const changes = view.state.changeByRange((range) => {
    const line = view.state.doc.lineAt(range.from);
    const indent = /^\s*/.exec(line.text)![0];
    const text = `\n${indent}`;
    return {
      changes: { from: range.from, to: range.to, insert: text },
      range: EditorSelection.cursor(range.from + text.length),
    };
  });
  view.dispatch(view.state.update(changes, { scrollIntoView: true, userEvent: 'input' }));
  return true;
};

const indent = (view: EditorView) => {
  view.dispatch(view.state.replaceSelection('  '));
  return true;
};

export const createEditor = (parent: HTMLElement, initial: string, onRun: () => void): SqlEditor => {
  const language = new Compartment();
  const sqlLanguage = (schema: SQLNamespace) => sql({ dialect: MindsDbSql, schema, upperCaseKeywords: true });
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: initial,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        drawSelection(),
        bracketMatching(),
        closeBrackets(),
        indentOnInput(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        autocompletion({ activateOnTyping: true }),
        language.of(sqlLanguage({})),
        EditorView.lineWrapping,
        placeholder('SELECT … (Ctrl+Enter runs the statement under the cursor)'),
        Prec.highest(
          keymap.of([
            { key: 'Mod-Enter', run: (v) => (closeCompletion(v), onRun(), true) },
            { key: 'Shift-Enter', run: (v) => (closeCompletion(v), onRun(), true) },
          ]),
        ),
        keymap.of([...completionKeymap, { key: 'Enter', run: newline }, { key: 'Tab', run: indent }]),
        EditorView.contentAttributes.of({ 'aria-label': 'SQL editor' }),
      ],
    }),
  });
  return {
    view,
    closeCompletion: () => void closeCompletion(view),
    currentStatement: () => {
      const { state } = view;
      const sel = state.selection.main;
      if (!sel.empty) return state.sliceDoc(sel.from, sel.to).trim().replace(/;\s*$/, '') || undefined;
      return statementAt(state.doc.toString(), sel.head);
    },
    insertStatement: (text) => {
      const doc = view.state.doc.toString();
      const statement = text.trim().endsWith(';') ? text.trim() : `${text.trim()};`;
      if (!doc.trim()) {
        view.dispatch({
          changes: { from: 0, to: doc.length, insert: statement },
          selection: { anchor: 0, head: statement.length },
        });
      } else {
        const prefix = doc.endsWith('\n') ? '' : '\n';
        const from = doc.length + prefix.length;
        view.dispatch({
          changes: { from: doc.length, insert: prefix + statement },
          selection: { anchor: from, head: from + statement.length },
          scrollIntoView: true,
        });
      }
      view.focus();
    },
    setText: (text) => {
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: text },
        selection: { anchor: text.length },
      });
      view.focus();
    },
    setSchema: (schema) => view.dispatch({ effects: language.reconfigure(sqlLanguage(schema)) }),
  };
};
