import { describe, expect, test } from "vitest";
import { countdownText, dropAlarmText, editSection, retentionText } from "../src/review/pure";
import type { SectionLike } from "../src/summary/pure";

const sec = (index: number, raw: string, level = 2): SectionLike => ({ index, title: "", name: `s${index}`, level, role: "other", raw, items: [] });

describe("review dialog helpers", () => {
  test("the countdown says minutes and seconds, then that the limit passed", () => {
    expect(countdownText(299_001)).toBe("Pi waits 5:00 more, then writes its own draft");
    expect(countdownText(61_000)).toBe("Pi waits 1:01 more, then writes its own draft");
    expect(countdownText(0)).toBe("Pi's time limit has passed");
  });

  test("the alarm line counts what is gone, or says there is nothing to compare", () => {
    expect(dropAlarmText(0, null)).toMatch(/No earlier compaction/);
    expect(dropAlarmText(0, "abc")).toMatch(/Carries every item/);
    expect(dropAlarmText(1, "abc")).toBe("⚠ 1 item of the previous summary (abc) is gone from this draft:");
    expect(dropAlarmText(3, "abc")).toMatch(/^⚠ 3 items .* are gone/);
  });

  test("retention as a share of the span's facts", () => {
    expect(retentionText(3, 4)).toMatch(/Mentions 3 of 4 facts .*\(75 %\)/);
    expect(retentionText(0, 0)).toMatch(/no paths/);
  });

  test("two section edits build on each other and keep the appendix", () => {
    const sections = [sec(0, "## Goal\nold goal\n\n"), sec(1, "## Next Steps\n1. a\n\n")];
    const appendix = "<read-files>\nx.py\n</read-files>";
    const text = sections.map((s) => s.raw).join("") + appendix;
    const one = editSection(sections, text, 0, "new goal");
    expect(one.text).toBe("## Goal\nnew goal\n\n## Next Steps\n1. a\n\n" + appendix);
    const two = editSection(one.sections, one.text, 1, "1. b");
    expect(two.text).toBe("## Goal\nnew goal\n\n## Next Steps\n1. b\n\n" + appendix);
    expect(two.sections[0].raw).toBe("## Goal\nnew goal\n\n");
  });
});
