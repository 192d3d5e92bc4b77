import { component, ref } from "../alpine.ts";

/** A "Copy" button: the source is a field (its value) or any element (its text). */
export const copyButton = component(() => ({
  label: "Copy",
  async copy() {
    const source = ref(this, "source");
    const field = source instanceof HTMLInputElement || source instanceof HTMLTextAreaElement;
    try {
      await navigator.clipboard.writeText(field ? source.value : (source.textContent ?? ""));
      this.label = "Copied";
    } catch {
      if (field) source.select();
      else window.getSelection()?.selectAllChildren(source);
      document.execCommand("copy");
      this.label = "Copied";
    }
    setTimeout(() => {
      this.label = "Copy";
    }, 2000);
  },
}));
