import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { contrast, effectiveTheme } from "../src/theme";

// The palettes are read from style.css itself, so the test checks what the app ships.
const css = readFileSync(resolve(__dirname, "../src/style.css"), "utf8");
function block(selector: string): Record<string, string> {
  const start = css.indexOf(`${selector} {`);
  expect(start, `${selector} block in style.css`).toBeGreaterThanOrEqual(0);
  const body = css.slice(start, css.indexOf("}", start));
  const vars: Record<string, string> = {};
  for (const m of body.matchAll(/--([a-z0-9-]+):\s*(#[0-9a-fA-F]{3,6})\b/g)) vars[m[1]] = m[2];
  return vars;
}
const themes = { dark: block(":root"), light: block(':root[data-theme="light"]') };

describe("theme palettes", () => {
  it("define the same variables in both themes", () => {
    expect(Object.keys(themes.light).sort()).toEqual(Object.keys(themes.dark).sort());
  });
  it("contrast math matches WCAG reference values", () => {
    expect(contrast("#000000", "#ffffff")).toBeCloseTo(21, 5);
    expect(contrast("#777777", "#ffffff")).toBeCloseTo(4.48, 2);
  });
  for (const [name, p] of Object.entries(themes)) {
    const texts = ["text", "muted", "accent", "green", "amber", "red", "violet", "inactive-text", "snippet-text"];
    const grounds = ["bg", "panel", "control-bg", "hover-bg", "cursor-bg", "code-bg", "card-bg", "notice-bg", "notice-error-bg"];
    for (const t of texts) {
      for (const g of grounds) {
        it(`${name}: --${t} on --${g} is at least 4.5:1`, () => {
          expect(contrast(p[t], p[g])).toBeGreaterThanOrEqual(4.5);
        });
      }
    }
    it(`${name}: label pill text on --violet is at least 4.5:1`, () => expect(contrast(p["label-text"], p.violet)).toBeGreaterThanOrEqual(4.5));
  }
  it("system follows the OS; a manual choice wins", () => {
    expect(effectiveTheme("system", true)).toBe("dark");
    expect(effectiveTheme("system", false)).toBe("light");
    expect(effectiveTheme("light", true)).toBe("light");
    expect(effectiveTheme("dark", false)).toBe("dark");
  });
});
