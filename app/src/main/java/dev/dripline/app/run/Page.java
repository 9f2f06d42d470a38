package dev.dripline.app.run;

import java.util.List;

/** One page of rows and the number of rows matching in all. */
record Page<T>(List<T> items, long total) {}
