package dev.dripline.app.run;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.micronaut.serde.annotation.Serdeable;
import java.util.List;

/**
 * A page of a listing.
 *
 * @param items the rows of this page
 * @param page the 0-based page number
 * @param size the page size asked for
 * @param total rows matching in all pages
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record PageResponse<T>(List<T> items, int page, int size, long total) {}
