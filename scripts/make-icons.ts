// Renders public/icon.svg to the PNG icons an installable web app needs (Android wants 192 and
// 512 in the manifest; iOS takes a 180 px apple-touch-icon). Run after changing the SVG:
// bun scripts/make-icons.ts
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const publicDir = join(import.meta.dir, "../public");
const svg = readFileSync(join(publicDir, "icon.svg"), "utf8");
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-background-networking"],
});
for (const [name, size, padding] of [
  ["icon-192.png", 192, 0],
  ["icon-512.png", 512, 0],
  ["apple-touch-icon.png", 180, 0],
  ["icon-maskable-512.png", 512, 64],
] as const) {
  const page = await browser.newPage({ viewport: { width: size, height: size } });
  await page.setContent(
    `<body style="margin:0;background:#4f46e5;display:grid;place-items:center;width:${size}px;height:${size}px">${svg.replace("<svg ", `<svg width="${size - 2 * padding}" height="${size - 2 * padding}" `)}</body>`,
  );
  await page.screenshot({ path: join(publicDir, name), omitBackground: padding === 0 });
  await page.close();
}
await browser.close();
console.log("icons written to public/");
