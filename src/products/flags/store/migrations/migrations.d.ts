// Types of the migration bundle drizzle-kit generates beside this file (migrations.js).
declare const bundle: {
  journal: { entries: { idx: number; when: number; tag: string; breakpoints: boolean }[] };
  migrations: Record<string, string>;
};
export default bundle;
