// A channel's colour is a slot of a palette of distinct colours, which the server picks (from its
// name; an older channel keeps its colour when a newer one wants the same, src/web/colors.ts); one
// palette per theme.

const darkMode = () => !!(window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches);

const CHANNEL_COLORS = {
  light: ["#3b6fb6", "#e07b1a", "#2e9e5b", "#d6404e", "#7b5bb5", "#1797a6", "#c9489a", "#8a6d3b", "#b8a300"],
  dark: ["#6fa3ef", "#f5a04d", "#5cc98a", "#f2737e", "#a98ce6", "#4cc3d1", "#ec7fc0", "#c6a173", "#e3cf3f"],
};

export const channelColor = (slot: number): string =>
  (darkMode() ? CHANNEL_COLORS.dark : CHANNEL_COLORS.light)[slot % CHANNEL_COLORS.light.length]!;

/** The colour of "other" (the channels or groups beyond those a chart names). */
export const otherColor = (): string => (darkMode() ? "#6b7280" : "#9ca3af");
