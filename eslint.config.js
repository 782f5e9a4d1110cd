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
      "require-yield": "off",
      // The package's index loads every module, among them the inlined Scalar and Swagger UI
      // bundles (about 20 MB of strings held by every process); modules are imported one by one.
      "no-restricted-imports": ["error", {
        paths: [{ name: "@effect/platform", message: "Import the module itself, e.g. \"@effect/platform/HttpClient\": the index loads the docs UIs' bundles." }]
      }]
    }
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly", setTimeout: "readonly", clearTimeout: "readonly", Buffer: "readonly" } }
  }
)
