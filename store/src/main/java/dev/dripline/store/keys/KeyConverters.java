package dev.dripline.store.keys;

import dev.dripline.spi.Key;
import io.micronaut.core.convert.MutableConversionService;
import io.micronaut.core.convert.TypeConverterRegistrar;
import jakarta.inject.Singleton;

/**
 * Lets Micronaut Data read a key column ({@code bytea}, {@link KeyCodec}) straight into a {@link
 * Key} field of a record a repository returns.
 */
@Singleton
public class KeyConverters implements TypeConverterRegistrar {
  @Override
  public void register(MutableConversionService conversionService) {
    conversionService.addConverter(byte[].class, Key.class, KeyCodec::decode);
  }
}
