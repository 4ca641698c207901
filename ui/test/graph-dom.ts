import { vi } from "vitest";

/** What the graph view needs of a browser that jsdom lacks: a canvas (none, so the lanes are not
 *  drawn, the rows are), animation frames (queued in `frames`, run only when the test says so)
 *  and a ResizeObserver. Undone by `vi.unstubAllGlobals()` and `vi.restoreAllMocks()`. */
export function stubGraphDom(frames: FrameRequestCallback[]): void {
  vi.spyOn(HTMLCanvasElement.prototype, "getContext").mockReturnValue(null);
  vi.stubGlobal("requestAnimationFrame", (f: FrameRequestCallback) => frames.push(f));
  vi.stubGlobal(
    "ResizeObserver",
    class {
      observe() {}
    },
  );
}
