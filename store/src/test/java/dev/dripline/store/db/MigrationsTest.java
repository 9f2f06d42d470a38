package dev.dripline.store.db;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A released migration has run against someone's database: editing it, even a comment, changes
 * Flyway's checksum and the next start fails validation. The manifest pins each one.
 */
class MigrationsTest {
  private static final Path MIGRATIONS = Path.of("src/main/resources/db/migration");

  @Test
  void noReleasedMigrationChangesAndEveryMigrationIsInTheManifest() throws IOException {
    Map<String, String> manifest = manifest();
    Map<String, String> actual = new TreeMap<>();
    try (Stream<Path> files = Files.list(MIGRATIONS)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".sql")).toList()) {
        actual.put(file.getFileName().toString(), sha256(Files.readAllBytes(file)));
      }
    }
    List<String> edited =
        actual.keySet().stream()
            .filter(name -> manifest.containsKey(name))
            .filter(name -> !manifest.get(name).equals(actual.get(name)))
            .toList();
    assertThat(edited)
        .as("released migrations edited (revert them; add a new migration instead)")
        .isEmpty();
    assertThat(actual.keySet())
        .as(
            "migrations, against store/src/test/resources/db/migration-sha256.txt (add a new"
                + " migration's line; never remove one)")
        .containsExactlyElementsOf(manifest.keySet());
  }

  private static Map<String, String> manifest() throws IOException {
    try (InputStream in = MigrationsTest.class.getResourceAsStream("/db/migration-sha256.txt")) {
      assertThat(in).as("the manifest resource").isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8)
          .lines()
          .filter(line -> !line.isBlank() && !line.startsWith("#"))
          .map(line -> line.split("\\s+"))
          .collect(Collectors.toMap(f -> f[1], f -> f[0], (a, b) -> a, TreeMap::new));
    }
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
