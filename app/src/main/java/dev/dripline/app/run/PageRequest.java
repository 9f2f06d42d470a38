package dev.dripline.app.run;

/**
 * Which page of a listing to return.
 *
 * @param page 0-based page number
 * @param size rows per page, 1 to 200
 */
public record PageRequest(int page, int size) {}
