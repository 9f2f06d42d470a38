package dev.dripline.activities.registry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.spi.TableBackfillDefinition;
import dev.dripline.spi.TableScope;
import java.io.StringWriter;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's first backfill is what a newcomer copies: it must compile against the SPI as it is,
 * and the key scan the README says Dripline runs for it must be the one the engine writes.
 */
class ReadmeExampleTest {
  private static final Path README = Path.of("..", "README.md");

  @Test
  void theReadmesFirstBackfillCompilesAndItsKeyScanIsTheOneTheEngineWrites(@TempDir Path dir)
      throws Exception {
    String readme = Files.readString(README);
    String section = readme.substring(readme.indexOf("## Writing a backfill"));
    Matcher block = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(section);
    assertThat(block.find()).as("a java block under 'Writing a backfill'").isTrue();
    String source = block.group(1);
    Matcher type = Pattern.compile("public class (\\w+)").matcher(source);
    assertThat(type.find()).isTrue();
    Path file = dir.resolve("com/acme/backfills/" + type.group(1) + ".java");
    Files.createDirectories(file.getParent());
    Files.writeString(file, source);

    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    StringWriter errors = new StringWriter();
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    boolean compiled =
        javac
            .getTask(
                errors,
                null,
                null,
                List.of("-classpath", classpath, "-d", dir.toString(), "-proc:none"),
                null,
                javac.getStandardFileManager(null, null, null).getJavaFileObjects(file))
            .call();
    assertThat(compiled).as("javac: %s", errors).isTrue();

    TableBackfillDefinition definition;
    try (URLClassLoader loader =
        new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader())) {
      definition =
          (TableBackfillDefinition)
              loader
                  .loadClass("com.acme.backfills." + type.group(1))
                  .getDeclaredConstructor()
                  .newInstance();
    }
    TableScope scope = definition.scope(null);
    String engine = new KeyedBackfill.TableKeys(definition, null).scanSql(false, scope);
    Matcher said = Pattern.compile("Dripline pages `(.*?)`", Pattern.DOTALL).matcher(section);
    assertThat(said.find()).as("the README states the key scan").isTrue();
    assertThat(normalized(said.group(1))).isEqualTo(normalized(engine));
  }

  private static String normalized(String sql) {
    return sql.replaceAll("\\s+", " ").trim().toLowerCase(Locale.ROOT);
  }
}
