package dev.dripline.store.catalogue;

import io.micronaut.serde.annotation.Serdeable;

/** One rejected field of a request, as listed in a problem document's {@code errors}. */
@Serdeable
public record FieldError(String field, String message) {}
