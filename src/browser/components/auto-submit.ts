import { component } from "../alpine.ts";

/** A form sent as soon as one of its fields changes. */
export const autoSubmit = component(() => ({
  submit() {
    const form = this.$root as HTMLFormElement;
    form.requestSubmit ? form.requestSubmit() : form.submit();
  },
}));
