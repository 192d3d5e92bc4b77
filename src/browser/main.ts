// The dashboard's behaviour in the browser, bundled into the page's app.js (src/web/app-bundle.ts).
// Alpine's CSP build evaluates no expressions, so every component is registered here by the name
// templates give it (x-data="filters"), and templates only name its properties and methods.
import { redrawChartsWhenUnfolded } from "./charts/draw.ts";
import { accountMenu } from "./components/account-menu.ts";
import { activityChart } from "./components/activity-chart.ts";
import { autoSubmit } from "./components/auto-submit.ts";
import { channelList } from "./components/channel-list.ts";
import { checksPage } from "./components/checks-page.ts";
import { chartForm } from "./components/chart-form.ts";
import { copyButton } from "./components/copy-button.ts";
import { dashboard } from "./components/dashboard.ts";
import { dialog } from "./components/dialog.ts";
import { filters } from "./components/filters.ts";
import { integrationForm } from "./components/integration-form.ts";
import { liveFeed } from "./components/live-feed.ts";
import { metricPage } from "./components/metric-page.ts";
import { passkey } from "./components/passkey.ts";
import { projectChoice } from "./components/project-choice.ts";
import { pushDevice } from "./components/push-device.ts";
import { scrollHint } from "./components/scroll-hint.ts";
import { seriesChart } from "./components/series-chart.ts";
import { shell } from "./components/shell.ts";
import { sharedStream } from "./components/shared-stream.ts";
import { showFor } from "./components/show-for.ts";
import { timeZoneField } from "./components/time-zone-field.ts";
import { tokenForm } from "./components/token-form.ts";
import { toggle } from "./components/toggle.ts";
import { keepValuesFitted } from "./fit-values.ts";
import { keepDeviceRegistered } from "./push.ts";
import { keepTimesFresh } from "./times.ts";
import { reportFailedRequests } from "./toasts.ts";

/** Every component, by the name its templates use. */
const COMPONENTS: Record<string, () => object> = {
  shell,
  toggle,
  accountMenu,
  scrollHint,
  filters,
  dialog,
  copyButton,
  pushDevice,
  autoSubmit,
  integrationForm,
  timeZoneField,
  tokenForm,
  projectChoice,
  activityChart,
  metricPage,
  seriesChart,
  dashboard,
  chartForm,
  showFor,
  channelList,
  liveFeed,
  checksPage,
  passkey,
  sharedStream,
};

keepValuesFitted();
keepTimesFresh();
redrawChartsWhenUnfolded();
reportFailedRequests();
keepDeviceRegistered();

document.addEventListener("alpine:init", () => {
  for (const [name, factory] of Object.entries(COMPONENTS)) window.Alpine.data(name, factory);
});
