// The words of a text as the full-text index sees them. The index (search.ts) tokenizes with
// SQLite's unicode61 tokenizer (remove_diacritics 2): letters and digits make words, everything
// else separates them, and each character is folded (lowercased, accents dropped). Live matching
// (a dashboard's search, a stream's filter) must find exactly what a reload would find, so it
// does not imitate that tokenizer: it asks it. Each character is classified once, by letting
// SQLite tokenize it in a scratch in-memory index, and remembered.
import { Database } from "bun:sqlite";

/** null: the character separates words; "": it belongs to a word but folds to nothing (a combining accent). */
const folds = new Map<number, string | null>();
let probe: { db: Database; insert: (text: string) => void; terms: () => { term: string }[]; clear: () => void } | null =
  null;

function openProbe() {
  const db = new Database(":memory:");
  db.exec("CREATE VIRTUAL TABLE probe USING fts5(t, tokenize='unicode61 remove_diacritics 2')");
  db.exec("CREATE VIRTUAL TABLE probe_terms USING fts5vocab(probe, 'instance')");
  const insert = db.prepare<never, [string]>("INSERT INTO probe (rowid, t) VALUES (1, ?)");
  const terms = db.prepare<{ term: string }, []>("SELECT term FROM probe_terms ORDER BY offset");
  const clear = db.prepare<never, []>("DELETE FROM probe");
  return { db, insert: (text: string) => insert.run(text), terms: () => terms.all(), clear: () => clear.run() };
}

/** Asks the tokenizer about each code point: "q<c>q" comes back as one word (folded) or as two "q"s. */
function classify(codePoints: number[]): void {
  probe ??= openProbe();
  probe.insert(codePoints.map((c) => `q${String.fromCodePoint(c)}q`).join(" "));
  const terms = probe.terms();
  probe.clear();
  let at = 0;
  for (const c of codePoints) {
    const term = terms[at]?.term ?? "q";
    if (term === "q" && terms[at + 1]?.term === "q") {
      folds.set(c, null);
      at += 2;
    } else {
      folds.set(c, term.slice(1, -1));
      at += 1;
    }
  }
}

// NUL and lone surrogates never reach the index as themselves: they separate words.
const alwaysSeparates = (c: number) => c === 0 || (c >= 0xd800 && c <= 0xdfff);

function learn(text: string): void {
  let unseen: Set<number> | null = null;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (folds.has(c)) continue;
    if (alwaysSeparates(c)) folds.set(c, null);
    else (unseen ??= new Set()).add(c);
  }
  if (unseen) classify([...unseen]);
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;
const ALNUM = /[a-z0-9]+/g;
/** Whether the tokenizer reads ASCII as letters and digits, lowercased (unicode61 does): then a fast path. */
let asciiIsAlnum: boolean | null = null;

function asciiRule(): boolean {
  classify(Array.from({ length: 127 }, (_, i) => i + 1));
  for (let c = 1; c < 128; c++) {
    const ch = String.fromCharCode(c);
    const alnum = /[A-Za-z0-9]/.test(ch);
    if (folds.get(c) !== (alnum ? ch.toLowerCase() : null)) return false;
  }
  return true;
}

/** The folded words of `text`, in order, as the full-text index stores them. */
export function searchTokens(text: string): string[] {
  asciiIsAlnum ??= asciiRule();
  // Most text is ASCII: one regular expression instead of a lookup per character.
  if (asciiIsAlnum && ASCII_ONLY.test(text)) return text.toLowerCase().match(ALNUM) ?? [];
  learn(text);
  const tokens: string[] = [];
  let word = "";
  for (const ch of text) {
    const fold = folds.get(ch.codePointAt(0)!);
    if (fold === null) {
      if (word) tokens.push(word);
      word = "";
    } else word += fold;
  }
  if (word) tokens.push(word);
  return tokens;
}

/** The most words a search uses; the rest of what was typed is ignored. */
export const MAX_TERMS = 16;

/** The words to search for in what was typed (folded, at most MAX_TERMS). */
export function searchTerms(typed: string): string[] {
  return searchTokens(typed).slice(0, MAX_TERMS);
}

/**
 * Search words → an FTS5 query: every word must appear, the last one as a prefix (so a word being
 * typed matches; a prefix over every word would cost several times more). Each word is quoted and
 * holds only word characters, so nothing typed is FTS5 syntax.
 */
export function ftsQuery(terms: string[]): string | null {
  if (!terms.length) return null;
  return terms.map((w, i) => (i === terms.length - 1 ? `"${w}"*` : `"${w}"`)).join(" ");
}
