// Every table of the platform, one file per product; drizzle-kit reads this file.
export * from "./platform";
export * from "./surveys";
