import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "node",
    include: ["{src,test}/**/*.{test,spec}.ts"],
    coverage: {
      include: ["src/**/*.ts"],
    },
  },
});
