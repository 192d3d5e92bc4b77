// Files imported `with { type: "text" }` (migrations) or `with { type: "file" }` (dashboard assets)
// are embedded by `bun build --compile`.
declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "*.png" {
  const path: string;
  export default path;
}
declare module "*.svg" {
  const path: string;
  export default path;
}
declare module "*.webmanifest" {
  const path: string;
  export default path;
}
declare module "htmx.org/dist/htmx.min.js" {
  const path: string;
  export default path;
}
declare module "@alpinejs/csp/dist/cdn.min.js" {
  const path: string;
  export default path;
}
declare module "uplot/dist/uPlot.iife.min.js" {
  const path: string;
  export default path;
}
