package dev.dripline.store.db;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every migration from V42 on keeps to {@link MigrationLockRules}: it never holds a lock that
 * blocks the running release's batches for longer than a catalogue update (PRODUCT.md D4,
 * CONTRIBUTING.md "Migrations"). V1–V41 were released before the rule and cannot change.
 */
class MigrationLocksTest {
  private static final Path MIGRATIONS = Path.of("src/main/resources/db/migration");
  private static final Pattern VERSION = Pattern.compile("^V(\\d+)(?:_\\d+)?__.*\\.sql$");
  private static final int FIRST_CHECKED = 42;

  @Test
  void everyMigrationFromV42OnTakesOnlyBriefLocks() throws IOException {
    List<String> found = new ArrayList<>();
    int checked = 0;
    try (Stream<Path> files = Files.list(MIGRATIONS)) {
      for (Path file : files.sorted().toList()) {
        Matcher name = VERSION.matcher(file.getFileName().toString());
        if (name.matches() && Integer.parseInt(name.group(1)) >= FIRST_CHECKED) {
          checked++;
          for (String violation :
              MigrationLockRules.violations(Files.readString(file, StandardCharsets.UTF_8))) {
            found.add(file.getFileName() + ": " + violation);
          }
        }
      }
    }
    assertThat(found).as("%d migrations checked", checked).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "alter table batches add column start_key_text text;",
        "alter table runs add column if not exists paused_by text not null default 'x';",
        "alter table runs add column weight integer not null default 1, add column note text;",
        "alter table runs add created timestamptz default now();",
        "alter table batches alter column start_key drop not null;",
        "alter table batches drop column if exists start_key;",
        "alter table runs alter column weight set default 2;",
        "alter table runs add constraint runs_weight_check check (weight > 0) not valid;",
        "alter table runs validate constraint runs_weight_check;",
        "alter table batches set (autovacuum_vacuum_scale_factor = 0.01);",
        "drop index concurrently if exists batches_x_idx;\n"
            + "create index concurrently batches_x_idx on batches (run_id, attempts);",
        "-- a comment; with a semicolon\n"
            + "drop index concurrently if exists batches_y_idx;\n"
            + "create unique index concurrently batches_y_idx on batches (run_id, number)"
            + " where status = 'pending';",
        "create table notes (id bigint primary key, run_id bigint not null);\n"
            + "create index notes_run_idx on notes (run_id);\n"
            + "alter table notes add constraint notes_run_fk foreign key (run_id) references"
            + " runs (id);",
        "create or replace function f() returns int language plpgsql as $$\n"
            + "begin update batches set attempts = 0; lock table runs; return 1; end $$;",
        "update runs set weight = 1 where weight is null;",
      })
  void briefChangesPass(String sql) {
    assertThat(MigrationLockRules.violations(sql)).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "create index batches_x_idx on batches (run_id, attempts);",
        "create index concurrently batches_x_idx on batches (run_id, attempts);",
        "drop index concurrently if exists batches_x_idx;"
            + " create index concurrently batches_x_idx on batches (run_id);"
            + " alter table runs add column note text;",
        "alter table batches alter column attempts type bigint;",
        "alter table runs alter column note set not null;",
        "alter table runs add column id2 bigint default nextval('s');",
        "alter table runs add column n uuid default gen_random_uuid();",
        "alter table runs add column note text, alter column note type varchar(10);",
        "alter table runs add constraint runs_weight_check check (weight > 0);",
        "alter table runs add primary key (id);",
        "alter table runs add column ref bigint references targets (id);",
        "alter table runs rename column note to remark;",
        "alter table batches set logged;",
        "lock table runs, batches in access exclusive mode;",
        "vacuum full batches;",
        "update batches set attempts = 0;",
        "delete from batches where run_id = 1;",
      })
  void lockingChangesAreRefused(String sql) {
    assertThat(MigrationLockRules.violations(sql)).isNotEmpty();
  }
}
