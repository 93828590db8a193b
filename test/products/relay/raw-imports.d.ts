// Vite's `?raw` imports (a file's text as a string), used to hold code constants against wrangler.toml.
declare module "*?raw" {
  const text: string;
  export default text;
}
