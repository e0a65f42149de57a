import { describe, expect, it } from "vitest";

import { greet } from "../src/index.js";

describe("greet", () => {
  it("greets by name", () => {
    expect(greet("jig")).toBe("Hello, jig!");
  });

  it("falls back to world for a blank name", () => {
    expect(greet("  ")).toBe("Hello, world!");
  });
});
