// HTML made from text that anyone may have sent (a public token ships inside web pages): the one
// escaper, the one Markdown set-up, and a sanitiser list for each place the HTML goes (the
// dashboard, Telegram, Matrix, e-mail, and plain text). In Markdown, raw HTML is shown as text, not
// interpreted, and an image becomes a link (nothing loads when the text is read); the sanitiser
// then keeps what the place shows, with links to http(s) and mailto only.
import { Marked, type MarkedExtension, type Tokens } from "marked";
import sanitizeHtml from "sanitize-html";

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Text as HTML: safe in content and in a quoted attribute value of either quote kind. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

// --- Markdown ---------------------------------------------------------------------------------------

const SETUP: MarkedExtension = {
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html: ({ text }) => escapeHtml(text),
    image: ({ href, text }) => `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`,
  },
};

const markdown = new Marked(SETUP);

type Parser = { parser: { parse(t: Tokens.Generic[]): string; parseInline(t: Tokens.Generic[]): string } };

// The same set-up for Telegram, whose HTML has no paragraphs, lists or headings: they become lines
// (its parser keeps newlines).
const telegramMarkdown = new Marked(SETUP, {
  renderer: {
    paragraph(this: Parser, { tokens }: Tokens.Paragraph) {
      return `${this.parser.parseInline(tokens)}\n\n`;
    },
    heading(this: Parser, { tokens }: Tokens.Heading) {
      return `<b>${this.parser.parseInline(tokens)}</b>\n\n`;
    },
    list(this: Parser, token: Tokens.List) {
      const start = typeof token.start === "number" ? token.start : 1;
      return `${token.items.map((item, i) => `${token.ordered ? `${start + i}.` : "•"} ${this.parser.parse(item.tokens).trim()}`).join("\n")}\n\n`;
    },
    code: ({ text }) => `<pre>${escapeHtml(text)}</pre>\n\n`,
    hr: () => "\n",
    br: () => "\n",
    strong(this: Parser, { tokens }: Tokens.Strong) {
      return `<b>${this.parser.parseInline(tokens)}</b>`;
    },
    em(this: Parser, { tokens }: Tokens.Em) {
      return `<i>${this.parser.parseInline(tokens)}</i>`;
    },
    del(this: Parser, { tokens }: Tokens.Del) {
      return `<s>${this.parser.parseInline(tokens)}</s>`;
    },
  },
});

// --- what each place keeps --------------------------------------------------------------------------

/** Paragraphs, emphasis, code, quotes, lists, links, headings and tables: what Markdown writes. */
const FORMATTING = [
  "p",
  "br",
  "hr",
  "strong",
  "em",
  "del",
  "code",
  "pre",
  "blockquote",
  "ul",
  "ol",
  "li",
  "a",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
];

const LINKS: Pick<sanitizeHtml.IOptions, "allowedSchemes" | "allowProtocolRelative"> = {
  allowedSchemes: ["http", "https", "mailto"],
  allowProtocolRelative: false,
};

// An event's description on the dashboard: what is not kept is shown as text; links open in a new
// tab without a referrer.
const DASHBOARD: sanitizeHtml.IOptions = {
  ...LINKS,
  allowedTags: FORMATTING,
  allowedAttributes: { a: ["href", "title", "rel", "target"], ol: ["start"], th: ["align"], td: ["align"] },
  disallowedTagsMode: "escape",
  transformTags: {
    a: sanitizeHtml.simpleTransform("a", { rel: "nofollow noopener noreferrer", target: "_blank" }),
  },
};

// What Telegram's parse_mode HTML accepts (core.telegram.org/bots/api#html-style); the rest is dropped, its text kept.
const TELEGRAM: sanitizeHtml.IOptions = {
  ...LINKS,
  allowedTags: ["b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre", "blockquote"],
  allowedAttributes: { a: ["href"] },
  disallowedTagsMode: "discard",
};

// What Matrix clients are asked to show of org.matrix.custom.html (the spec's list, less images and colours).
const MATRIX_TAGS = [...FORMATTING, "b", "i", "u", "s", "strike", "sup", "sub", "caption"];
const MATRIX: sanitizeHtml.IOptions = {
  ...LINKS,
  allowedTags: MATRIX_TAGS,
  allowedAttributes: { a: ["href"], ol: ["start"] },
  disallowedTagsMode: "discard",
};

// E-mail: the usual formatting, links, no images or styles (nothing loads or tracks when it is read).
const EMAIL: sanitizeHtml.IOptions = {
  ...LINKS,
  allowedTags: [...MATRIX_TAGS, "div", "span"],
  allowedAttributes: { a: ["href", "title"], ol: ["start"], th: ["align"], td: ["align"] },
  disallowedTagsMode: "discard",
};

// Plain text: every tag dropped, its text kept.
const WORDS: sanitizeHtml.IOptions = { allowedTags: [], allowedAttributes: {} };

// --- per place --------------------------------------------------------------------------------------

/** An event's Markdown description as the dashboard shows it. */
export const dashboardHtml = (text: string) => sanitizeHtml(markdown.parse(text) as string, DASHBOARD);

export const telegramHtml = (text: string) =>
  sanitizeHtml(telegramMarkdown.parse(text) as string, TELEGRAM)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
export const matrixHtml = (text: string) => sanitizeHtml(markdown.parse(text) as string, MATRIX).trim();
/** HTML (a rendered template) as an e-mail may show it. */
export const emailHtml = (html: string) => sanitizeHtml(html, EMAIL).trim();
/** Markdown as an e-mail shows it. */
export const markdownEmailHtml = (text: string) => emailHtml(markdown.parse(text) as string);

/** The words of HTML, for a plain-text part: tags dropped (the sanitiser keeps their text), entities decoded. */
export const htmlText = (html: string) =>
  sanitizeHtml(html.replace(/<br\s*\/?>/gi, "\n").replace(/<\/(p|div|li|h\d|tr|blockquote|pre)>/gi, "$&\n"), WORDS)
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
