/** The first element of an HTML fragment, as the server sends one over a stream. */
export function fragment(markup: string): HTMLElement | null {
  const template = document.createElement("template");
  template.innerHTML = markup.trim();
  return template.content.firstElementChild as HTMLElement | null;
}
