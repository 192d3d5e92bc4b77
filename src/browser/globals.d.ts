// What the dashboard's pages load beside this bundle, each in a <script> of its own
// (src/web/views/layout.ts): Alpine (its CSP build), htmx, and uPlot on pages with charts.
import type htmx from "htmx.org";
import type uPlot from "uplot";
import type { AlpineGlobal } from "./alpine.ts";
import type { toast } from "./toasts.ts";

declare global {
  interface Window {
    Alpine: AlpineGlobal;
    htmx?: typeof htmx;
    uPlot?: typeof uPlot;
    signalboardToast: typeof toast;
  }
}
