/// <reference types="vitest/config" />
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// `npm run dev` serves the app with hot reload and forwards the API to a running platform
// (PLATFORM_URL, default http://127.0.0.1:8000), WebSockets included.
const platform = process.env.PLATFORM_URL ?? "http://127.0.0.1:8000";

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: {
      "/v0": { target: platform, ws: true, changeOrigin: true },
      "/docs": platform,
      "/openapi.json": platform,
    },
  },
  build: { outDir: "dist", sourcemap: true },
  test: { include: ["src/**/*.test.ts", "src/**/*.test.tsx"] },
});
