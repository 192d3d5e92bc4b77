// Event descriptions sent with parser "markdown". Event content is attacker-controlled (public
// tokens ship inside web pages), so: raw HTML in the markdown is shown as text, not interpreted;
// the rendered HTML then goes through sanitize-html with a short allowlist; links keep only
// http(s) and mailto and open in a new tab without a referrer.
import { Marked } from "marked";
import sanitizeHtml from "sanitize-html";
import { escapeHtml, type Html, trusted } from "./html.ts";

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html: ({ text }) => escapeHtml(text),
    // An image would load from wherever the sender likes as soon as someone looks: show a link.
    image: ({ href, text }) => `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`,
  },
});

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
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
  ],
  allowedAttributes: { a: ["href", "title"], ol: ["start"], th: ["align"], td: ["align"] },
  allowedSchemes: ["http", "https", "mailto"],
  allowProtocolRelative: false,
  disallowedTagsMode: "escape",
  transformTags: {
    a: sanitizeHtml.simpleTransform("a", { rel: "nofollow noopener noreferrer", target: "_blank" }),
  },
};
SANITIZE.allowedAttributes = { ...SANITIZE.allowedAttributes, a: ["href", "title", "rel", "target"] };

export function renderMarkdown(text: string): Html {
  const rendered = marked.parse(text) as string;
  return trusted(sanitizeHtml(rendered, SANITIZE));
}

/** Plain text with its line breaks kept (the CSS keeps whitespace; this only escapes). */
export function renderPlain(text: string): Html {
  return trusted(escapeHtml(text));
}
