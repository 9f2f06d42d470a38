package dev.dripline.examples;

import static dev.dripline.examples.TestData.context;
import static dev.dripline.examples.TestData.query;
import static dev.dripline.examples.TestData.uniqueRunId;
import static dev.dripline.examples.TestData.uniqueTag;
import static dev.dripline.examples.TestData.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeyRange;
import dev.dripline.store.db.Database;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@MicronautTest(startApplication = false, transactional = false)
class NormalizeEmailsBackfillIT {
  @Inject Database database;
  final NormalizeEmailsBackfill normalize = new NormalizeEmailsBackfill();

  private String marker;
  private long[] ids;

  /** Inserts five users of this test: messy, clean, messy, clean, messy. */
  @BeforeEach
  void insertUsers() {
    marker = uniqueTag("n").replace("-", "");
    String[] emails = {
      "  Ann." + marker + "@Example.COM ",
      "bob." + marker + "@example.com",
      "CAROL." + marker + "@EXAMPLE.COM",
      "dan." + marker + "@example.com",
      " eve." + marker + "@example.com"
    };
    ids = new long[emails.length];
    for (int i = 0; i < emails.length; i++) {
      ids[i] =
          TestData.queryLong(
              database, "insert into example_users (email) values (?) returning id", emails[i]);
    }
  }

  @AfterEach
  void deleteUsers() {
    update(database, "delete from example_users where id between ? and ?", ids[0], ids[4]);
  }

  private List<Object> emails() {
    return query(
            database,
            "select email from example_users where id between ? and ? order by id",
            ids[0],
            ids[4])
        .stream()
        .map(row -> row.get(0))
        .toList();
  }

  @Test
  void scopeIsUsersWithUnnormalisedEmails() throws Exception {
    BackfillContext context = context(database, uniqueRunId(), NormalizeEmailsBackfill.NAME);

    List<Long> keys = normalize.keysAfter(context, ids[0] - 1, 100);

    // Filter to this test's id range: other rows of the shared table may be in scope too.
    assertThat(keys.stream().filter(id -> id <= ids[4])).containsExactly(ids[0], ids[2], ids[4]);
    assertThat(normalize.keysAfter(context, ids[0], 1)).containsExactly(ids[2]);
    assertThat(normalize.keysAfter(context, null, 1)).hasSize(1);
  }

  @Test
  void batchNormalisesItsRangeAndIsIdempotent() throws Exception {
    BackfillContext context = context(database, uniqueRunId(), NormalizeEmailsBackfill.NAME);
    KeyRange range = new KeyRange(ids[0], ids[3]);

    normalize.processBatch(context, range);
    List<Object> once = emails();
    normalize.processBatch(context, range);

    assertThat(once)
        .containsExactly(
            "ann." + marker + "@example.com",
            "bob." + marker + "@example.com",
            "carol." + marker + "@example.com",
            "dan." + marker + "@example.com",
            " eve." + marker + "@example.com");
    assertThat(emails()).isEqualTo(once);
    assertThat(normalize.keysAfter(context, ids[0] - 1, 100).stream().filter(id -> id <= ids[4]))
        .containsExactly(ids[4]);
  }

  @Test
  void batchFaultFailsTheBatchWithoutWritingUntilDeleted() throws Exception {
    String tag = uniqueTag("normalize-fault");
    BackfillContext context =
        context(database, uniqueRunId(), NormalizeEmailsBackfill.NAME, "faultTag", tag);
    update(
        database,
        "insert into example_faults (tag, phase, key) values (?, 'batch', ?)",
        tag,
        ids[2]);
    KeyRange range = new KeyRange(ids[0], ids[4]);
    try {
      assertThatThrownBy(() -> normalize.processBatch(context, range))
          .isInstanceOf(InjectedFaultException.class);
      assertThat(emails().get(0)).isEqualTo("  Ann." + marker + "@Example.COM ");
    } finally {
      update(database, "delete from example_faults where tag = ?", tag);
    }

    normalize.processBatch(context, range);
    assertThat(emails().get(0)).isEqualTo("ann." + marker + "@example.com");
  }
}
