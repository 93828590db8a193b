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
