// The page numbers of a paginated list answer, `{page, per_page, total, total_pages}`, built in one
// place for the products that page by number (audit's `meta.pagination`, mail's `pagination`).

/** A 1-based page request, as the products' list queries parse it. */
export interface PageQuery {
  page: number;
  per_page: number;
}

/** The page numbers of a list answer. */
export interface Pagination extends PageQuery {
  total: number;
  total_pages: number;
}

/**
 * The pagination of `total` rows for the page asked: `total_pages` counts every page, so it is
 * 0 when nothing matches and a page past the last simply lists nothing.
 */
export function pagination(query: PageQuery, total: number): Pagination {
  return { page: query.page, per_page: query.per_page, total, total_pages: Math.ceil(total / query.per_page) };
}

/** A page bounded in bytes as well as in rows. */
export interface BoundedPage {
  limit: number;
  maxBytes: number;
}

/**
 * The first of `rows` (a SQL cursor, read one row at a time, or an array) up to `page.limit` rows
 * and `page.maxBytes` by `bytesOf` (the first row always, however large): a store call's answer, or
 * a coalesced call's arguments, stays far under the 32 MiB a Durable Object call carries. `more`
 * says a row was left; read a cursor of `limit + 1` rows to know it without another query.
 */
export function boundedPage<T>(rows: Iterable<T>, page: BoundedPage, bytesOf: (row: T) => number): { rows: T[]; more: boolean } {
  const taken: T[] = [];
  let bytes = 0;
  for (const row of rows) {
    if (taken.length === page.limit) return { rows: taken, more: true };
    bytes += bytesOf(row);
    if (taken.length > 0 && bytes > page.maxBytes) return { rows: taken, more: true };
    taken.push(row);
  }
  return { rows: taken, more: false };
}
