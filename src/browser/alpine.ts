// Alpine's CSP build evaluates no expressions: a template names a component (x-data="filters") and
// its properties and methods, and the component is an object its factory returns, registered by
// name (main.ts). Its methods see Alpine's magics on `this` beside the object's own members.

/** What Alpine adds to a component's `this`. */
export interface Magics {
  /** The element with x-data. */
  $root: HTMLElement;
  /** The element the directive being run is on. */
  $el: HTMLElement;
  /** The elements of the component marked x-ref="name". */
  $refs: Record<string, HTMLElement>;
  /** The event a listener (x-on) runs for. */
  $event: Event;
  $nextTick(callback?: () => void): Promise<void>;
}

/** Alpine itself, as far as the dashboard uses it. */
export interface AlpineGlobal {
  data(name: string, factory: () => object): void;
}

/** A component's factory: `this` in its methods is the object it returns and the magics. */
export function component<T extends object>(factory: () => T & ThisType<T & Magics>): () => T {
  return factory;
}

/** The element x-ref="name" of a component, which its template always has. */
export function ref<E extends HTMLElement = HTMLElement>(self: Magics, name: string): E {
  const el = self.$refs[name];
  if (!el) throw new Error(`x-ref="${name}" is missing`);
  return el as E;
}
