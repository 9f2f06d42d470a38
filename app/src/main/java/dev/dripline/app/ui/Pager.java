package dev.dripline.app.ui;

/**
 * A list's paging links.
 *
 * @param page this page, 1-based
 * @param pages how many pages there are (at least 1)
 * @param total items in all pages
 * @param previous the query string of the previous page, or empty on the first
 * @param next the query string of the next page, or empty on the last
 */
public record Pager(int page, long pages, long total, String previous, String next) {
  static Pager of(int page, int size, long total, String query) {
    return of(page, size, total, query, "page");
  }

  static Pager of(int page, int size, long total, String query, String parameter) {
    long pages = Math.max(1, (total + size - 1) / size);
    String previous = page > 1 ? "?" + parameter + "=" + (page - 1) + query : "";
    String next = page < pages ? "?" + parameter + "=" + (page + 1) + query : "";
    return new Pager(page, pages, total, previous, next);
  }
}
