// Flat config: typescript-eslint's recommended rules on every workspace package.
import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/dist/**", "**/.tsbuild/**", "**/node_modules/**", "**/coverage/**", "data/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: "readonly", console: "readonly", URL: "readonly", setTimeout: "readonly", clearTimeout: "readonly" }
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "no-constant-condition": ["error", { checkLoops: false }],
      "require-yield": "off"
    }
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    // Node's globals that scripts (bench/, bin/) use.
    languageOptions: {
      globals: Object.fromEntries(
        [
          "process", "console", "URL", "URLSearchParams", "setTimeout", "clearTimeout", "setInterval", "clearInterval",
          "setImmediate", "Buffer", "performance", "fetch", "AbortController", "AbortSignal", "TextEncoder", "TextDecoder",
          "structuredClone", "queueMicrotask"
        ].map((name) => [name, "readonly"])
      )
    }
  }
)
