// Light and dark themes: "system" follows prefers-color-scheme; the choice is remembered in
// localStorage. The colours themselves are CSS custom properties in style.css
// (`:root` is dark, `:root[data-theme="light"]` is light); this module only picks one and tells
// canvas drawers (the graph) to re-read them through the "arbor-theme" event.

export type ThemeMode = "system" | "light" | "dark";
export const THEME_KEY = "arbor.theme";
export const THEME_EVENT = "arbor-theme";

const modes: ThemeMode[] = ["system", "light", "dark"];

export function storedMode(): ThemeMode {
  try {
    const v = localStorage.getItem(THEME_KEY);
    return modes.includes(v as ThemeMode) ? (v as ThemeMode) : "system";
  } catch {
    return "system";
  }
}

export function effectiveTheme(mode: ThemeMode, systemDark: boolean): "light" | "dark" {
  return mode === "system" ? (systemDark ? "dark" : "light") : mode;
}

const query = () => (typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null);

export function applyTheme(mode: ThemeMode = storedMode()): "light" | "dark" {
  const t = effectiveTheme(mode, query()?.matches ?? true);
  document.documentElement.dataset.theme = t;
  document.documentElement.dataset.themeMode = mode;
  window.dispatchEvent(new CustomEvent(THEME_EVENT, { detail: t }));
  return t;
}

/** Wire the System / Light / Dark `<select>` and follow system changes while on "system". */
export function initTheme(select: HTMLSelectElement | null): void {
  applyTheme();
  if (select) {
    select.value = storedMode();
    select.addEventListener("change", () => {
      const m = select.value as ThemeMode;
      try {
        localStorage.setItem(THEME_KEY, m);
      } catch {
        /* storage unavailable: the choice lasts for this window only */
      }
      applyTheme(m);
    });
  }
  query()?.addEventListener("change", () => {
    if (storedMode() === "system") applyTheme("system");
  });
}

/** A CSS custom property of the document root, trimmed ("" when unset). */
export function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

// ---- WCAG contrast (used by the palette test) -------------------------------------------------

function channel(c: number): number {
  const s = c / 255;
  return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
}

/** Relative luminance of a #rgb or #rrggbb colour. */
export function luminance(hex: string): number {
  let h = hex.replace("#", "");
  if (h.length === 3) h = [...h].map((c) => c + c).join("");
  const n = parseInt(h, 16);
  return 0.2126 * channel((n >> 16) & 255) + 0.7152 * channel((n >> 8) & 255) + 0.0722 * channel(n & 255);
}

export function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}
