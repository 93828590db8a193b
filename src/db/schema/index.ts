// Every table of the platform, one file per product; drizzle-kit reads this file.
export * from "./platform";
export * from "./audit";
export * from "./logs";
export * from "./relay";
export * from "./mail";
export * from "./push";
export * from "./surveys";
export * from "./console";
export * from "./forms";
export * from "./analytics";
export * from "./flags";
