package dev.dripline.app.run;

import java.util.List;

/**
 * One page of rows and the number of rows matching in all.
 *
 * @param items the rows of this page
 * @param total rows matching in all pages
 */
public record Page<T>(List<T> items, long total) {}
