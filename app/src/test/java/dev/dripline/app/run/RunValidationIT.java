package dev.dripline.app.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.store.db.Database;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** R1: every invalid creation is a 400 problem with one error per field, and creates nothing. */
@MicronautTest(transactional = false)
class RunValidationIT {
  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;

  private Api api;
  private TestData data;
  private final String backfill = TestData.uniqueName();

  @BeforeEach
  void setUp() {
    api = new Api(client, json);
    data = new TestData(database);
    data.definition(backfill, 10, null);
  }

  @AfterEach
  void tearDown() {
    data.cleanUp(backfill);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "unknown backfill    | {'backfill':'apptest.nope','options':{'items':1}}  | backfill",
        "unknown option      | {'backfill':'@','options':{'items':1,'colour':'red'}} | options.colour",
        "wrong option type   | {'backfill':'@','options':{'items':'many'}}        | options.items",
        "option below min    | {'backfill':'@','options':{'items':-1}}            | options.items",
        "missing required    | {'backfill':'@','options':{}}                      | options.items",
        "bad enum value      | {'backfill':'@','options':{'items':1,'mode':'warp'}} | options.mode",
        "options not object  | {'backfill':'@','options':[1]}                     | options",
        "to before from      | {'backfill':'@','options':{'items':1,'from':'2026-12-01','to':'2026-11-30'}} | options.to",
        "missing backfill    | {'options':{'items':1}}                            | backfill",
        "backfill not string | {'backfill':7,'options':{'items':1}}               | backfill",
        "backfill an array   | {'backfill':['@'],'options':{'items':1}}           | backfill",
        "batchSize 0         | {'backfill':'@','options':{'items':1},'batchSize':0} | batchSize",
        "batchSize fraction  | {'backfill':'@','options':{'items':1},'batchSize':1.5} | batchSize",
        "batchSize string    | {'backfill':'@','options':{'items':1},'batchSize':'10'} | batchSize",
        "batchSize boolean   | {'backfill':'@','options':{'items':1},'batchSize':true} | batchSize",
        "maxRecords 0        | {'backfill':'@','options':{'items':1},'maxRecords':0} | maxRecords",
        "maxParallel 0       | {'backfill':'@','options':{'items':1},'maxParallelBatches':0} | maxParallelBatches",
        "bad startAt         | {'backfill':'@','options':{'items':1},'startAt':'tomorrow'} | startAt",
        "startAt number      | {'backfill':'@','options':{'items':1},'startAt':5}   | startAt",
        "startAt digits      | {'backfill':'@','options':{'items':1},'startAt':'1767225600'} | startAt",
        "unknown field       | {'backfill':'@','options':{'items':1},'priority':1}  | priority",
        "target not duration | {'backfill':'@','options':{'items':1},'targetBatchDuration':'soon'} | targetBatchDuration",
        "target zero         | {'backfill':'@','options':{'items':1},'targetBatchDuration':'PT0S'} | targetBatchDuration",
        "target negative     | {'backfill':'@','options':{'items':1},'targetBatchDuration':'-PT2S'} | targetBatchDuration",
        "target under 1 ms   | {'backfill':'@','options':{'items':1},'targetBatchDuration':'PT0.0001S'} | targetBatchDuration",
        "target over a day   | {'backfill':'@','options':{'items':1},'targetBatchDuration':'P2D'} | targetBatchDuration",
        "target a number     | {'backfill':'@','options':{'items':1},'targetBatchDuration':2} | targetBatchDuration",
        "target a date       | {'backfill':'@','options':{'items':1},'targetBatchDuration':'2026-01-01'} | targetBatchDuration",
        "minBatchSize 0      | {'backfill':'@','options':{'items':1},'targetBatchDuration':'PT2S','minBatchSize':0} | minBatchSize",
        "maxBatchSize 0      | {'backfill':'@','options':{'items':1},'targetBatchDuration':'PT2S','maxBatchSize':0} | maxBatchSize",
        "maxBatchSize string | {'backfill':'@','options':{'items':1},'targetBatchDuration':'PT2S','maxBatchSize':'9'} | maxBatchSize",
        "min above max       | {'backfill':'@','options':{'items':1},'targetBatchDuration':'PT2S','minBatchSize':10,'maxBatchSize':9} | minBatchSize",
        "min without target  | {'backfill':'@','options':{'items':1},'minBatchSize':5} | minBatchSize",
        "max without target  | {'backfill':'@','options':{'items':1},'maxBatchSize':5} | maxBatchSize",
        "unknown pool        | {'backfill':'@','options':{'items':1},'pool':'run-validation-it-no-pool'} | pool",
        "blank pool          | {'backfill':'@','options':{'items':1},'pool':''}     | pool",
        "niceRatio negative  | {'backfill':'@','options':{'items':1},'niceRatio':-0.5} | niceRatio",
        "niceRatio over 100  | {'backfill':'@','options':{'items':1},'niceRatio':100.5} | niceRatio",
        "niceRatio a string  | {'backfill':'@','options':{'items':1},'niceRatio':'1'} | niceRatio",
        "niceRatio a boolean | {'backfill':'@','options':{'items':1},'niceRatio':true} | niceRatio",
        "niceRatio an array  | {'backfill':'@','options':{'items':1},'niceRatio':[1]} | niceRatio",
      })
  void rejectsAnInvalidFieldAndCreatesNothing(String name, String body, String field) {
    long before = runsOfTestBackfills();

    Api.Reply reply = api.post("/api/runs", body.replace('\'', '"').replace("@", backfill));

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(reply.object()).containsEntry("status", 400).containsKeys("type", "title", "detail");
    assertThat(reply.errorFields()).containsExactly(field);
    assertThat(runsOfTestBackfills()).isEqualTo(before);
  }

  /**
   * A dry run is validated as a create is, the options as a whole included: a 400 naming the option
   * before any worker is asked.
   */
  @Test
  void rejectsADryRunWhoseOptionsDoNotHoldTogetherAndCreatesNothing() {
    long before = runsOfTestBackfills();
    String body =
        """
        {"backfill":"%s","options":{"items":1,"from":"2026-12-01","to":"2026-11-30"}}
        """
            .formatted(backfill);

    Api.Reply reply = api.post("/api/runs?dryRun=true", body);

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(reply.errorFields()).containsExactly("options.to");
    assertThat(reply.object().get("errors").toString()).contains("options.from (2026-12-01)");
    assertThat(runsOfTestBackfills()).isEqualTo(before);
  }

  @Test
  void reportsEveryBadFieldAtOnce() {
    String body =
        """
        {"backfill":"%s","options":{"items":"x","mode":"warp"},"batchSize":0,"maxRecords":0,
         "maxParallelBatches":-2,"startAt":"soon"}
        """
            .formatted(backfill);

    Api.Reply reply = api.post("/api/runs", body);

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.errorFields())
        .containsExactlyInAnyOrder(
            "options.items",
            "options.mode",
            "batchSize",
            "maxRecords",
            "maxParallelBatches",
            "startAt");
    assertThat(runsOfTestBackfills()).isZero();
  }

  @ParameterizedTest(name = "body: {0}")
  @CsvSource(
      delimiter = '|',
      value = {"{\"backfill\": ", "not json at all", "[1,2]", "42", "\"text\""})
  void rejectsABodyThatIsNotAJsonObject(String body) {
    long before = runsOfTestBackfills();

    Api.Reply reply = api.post("/api/runs", body);

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(reply.errorFields()).containsExactly("body");
    assertThat(runsOfTestBackfills()).isEqualTo(before);
  }

  @Test
  void rejectsAnEmptyBody() {
    Api.Reply reply = api.post("/api/runs", "");

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.contentType()).startsWith("application/problem+json");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "{}                              | maxParallelBatches",
        "{\"maxParallelBatches\":0}       | maxParallelBatches",
        "{\"maxParallelBatches\":\"2\"}   | maxParallelBatches",
        "{\"maxParallelBatches\":2.5}     | maxParallelBatches",
        "{\"maxParallelBatches\":true}    | maxParallelBatches",
        "{\"maxParallelBatches\":2,\"x\":1} | x",
      })
  void rejectsABadCapChange(String body, String field) {
    long id = data.run(backfill, "running", "{\"items\":1}");

    Api.Reply reply = api.patch("/api/runs/" + id, body);

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.errorFields()).containsExactly(field);
    assertThat(data.count("select max_parallel_batches from runs where id = ?", id)).isEqualTo(3);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "?status=finished     | status",
        "?page=-1             | page",
        "?page=x              | page",
        "?size=0              | size",
        "?size=201            | size",
      })
  void rejectsBadListParameters(String query, String field) {
    Api.Reply reply = api.get("/api/runs" + query);

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.errorFields()).containsExactly(field);
  }

  @Test
  void rejectsBadBatchListParameters() {
    long id = data.run(backfill, "running", "{\"items\":1}");

    Api.Reply reply = api.get("/api/runs/" + id + "/batches?status=done&size=x");

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.errorFields()).containsExactlyInAnyOrder("status", "size");
  }

  @Test
  void rejectsARunsBoundThatConflictsWithItsDefinitionsAndNamesTheRunsField() {
    String tuned = TestData.uniqueName();
    data.definition(tuned, 10, null);
    data.sql(
        "update backfill_definitions set target_batch_millis = 2000, min_batch_size = 100,"
            + " max_batch_size = 1000 where name = ?",
        tuned);
    try {
      Api.Reply belowMin =
          api.post(
              "/api/runs",
              "{\"backfill\":\"%s\",\"options\":{\"items\":1},\"maxBatchSize\":50}"
                  .formatted(tuned));
      Api.Reply aboveMax =
          api.post(
              "/api/runs",
              "{\"backfill\":\"%s\",\"options\":{\"items\":1},\"minBatchSize\":5000}"
                  .formatted(tuned));

      assertThat(belowMin.status()).isEqualTo(400);
      assertThat(belowMin.errorFields()).containsExactly("maxBatchSize");
      assertThat(String.valueOf(belowMin.body())).contains("100, backfill " + tuned + "'s");
      assertThat(aboveMax.status()).isEqualTo(400);
      assertThat(aboveMax.errorFields()).containsExactly("minBatchSize");
      assertThat(data.count("select count(*) from runs where backfill = ?", tuned)).isZero();
    } finally {
      data.cleanUp(tuned);
    }
  }

  @Test
  void aBadTargetIsReportedBesideTheOtherBadFields() {
    String body =
        """
        {"backfill":"%s","options":{"items":"x"},"batchSize":0,"targetBatchDuration":"PT0S",
         "minBatchSize":0}
        """
            .formatted(backfill);

    Api.Reply reply = api.post("/api/runs", body);

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.errorFields())
        .containsExactlyInAnyOrder(
            "options.items", "batchSize", "targetBatchDuration", "minBatchSize");
    assertThat(String.valueOf(reply.body())).contains("positive ISO-8601 duration");
    assertThat(runsOfTestBackfills()).isZero();
  }

  private long runsOfTestBackfills() {
    return data.count(
        "select count(*) from runs where backfill = ? or backfill = 'apptest.nope'", backfill);
  }
}
