package dev.dripline.store.catalogue;

import dev.dripline.spi.KeyColumn;
import dev.dripline.spi.KeyType;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import io.micronaut.serde.annotation.SerdeImport;

/**
 * Makes the SPI's option types (de)serialisable by Micronaut Serialization — the catalogue table
 * and the HTTP API carry them as JSON — without the SPI depending on Micronaut.
 */
@SerdeImport(OptionSpec.class)
@SerdeImport(OptionType.class)
@SerdeImport(KeyColumn.class)
@SerdeImport(KeyType.class)
final class OptionSerde {
  private OptionSerde() {}
}
