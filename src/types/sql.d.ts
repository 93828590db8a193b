// SQL files are imported as text (wrangler.toml [[rules]] type "Text"; the vitest config's loader).
declare module "*.sql" {
  const text: string;
  export default text;
}
