package dev.dripline.app.targets;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.store.db.Database;
import io.micronaut.context.annotation.Property;
import io.micronaut.http.HttpRequest;
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
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every invalid request to the targets API is a 400 problem with one error per field and creates
 * nothing; every action on an unknown target is a 404. None of this reaches Temporal, which is
 * pointed at a port nobody listens on to prove it.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class TargetValidationIT {
  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;

  private Api api;
  private TestData data;
  private final String backfill = TestData.uniqueName();
  private final String target = TestData.uniqueTarget();

  @BeforeEach
  void setUp() {
    api = new Api(client, json);
    data = new TestData(database);
    data.definition(backfill, 10, null);
  }

  @AfterEach
  void tearDown() {
    data.cleanUpTargets(target);
    data.cleanUp(backfill);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "missing name        | {'backfill':'@','options':{'items':1}}                    | name",
        "name not string     | {'name':7,'backfill':'@','options':{'items':1}}           | name",
        "empty name          | {'name':'','backfill':'@','options':{'items':1}}          | name",
        "name with slash     | {'name':'a/b','backfill':'@','options':{'items':1}}       | name",
        "name with space     | {'name':'a b','backfill':'@','options':{'items':1}}       | name",
        "name too long       | {'name':'$101','backfill':'@','options':{'items':1}}      | name",
        "missing backfill    | {'name':'#','options':{'items':1}}                        | backfill",
        "backfill not string | {'name':'#','backfill':7,'options':{'items':1}}           | backfill",
        "unknown backfill    | {'name':'#','backfill':'apptest.nope','options':{'items':1}} | backfill",
        "unknown option      | {'name':'#','backfill':'@','options':{'items':1,'colour':'red'}} | options.colour",
        "wrong option type   | {'name':'#','backfill':'@','options':{'items':'many'}}    | options.items",
        "option below min    | {'name':'#','backfill':'@','options':{'items':-1}}        | options.items",
        "missing required    | {'name':'#','backfill':'@','options':{}}                  | options.items",
        "bad enum value      | {'name':'#','backfill':'@','options':{'items':1,'mode':'warp'}} | options.mode",
        "options not object  | {'name':'#','backfill':'@','options':[1]}                 | options",
        "to before from      | {'name':'#','backfill':'@','options':{'items':1,'from':'2026-12-01','to':'2026-11-30'}} | options.to",
        "group not string    | {'name':'#','backfill':'@','options':{'items':1},'group':1} | group",
        "group with colon    | {'name':'#','backfill':'@','options':{'items':1},'group':'a:b'} | group",
        "empty group         | {'name':'#','backfill':'@','options':{'items':1},'group':''} | group",
        "unknown field       | {'name':'#','backfill':'@','options':{'items':1},'priority':1} | priority",
      })
  void rejectsAnInvalidFieldAndCreatesNothing(String name, String body, String field) {
    long before = targetsOfThisTest();

    Api.Reply reply =
        api.post(
            "/api/targets",
            body.replace('\'', '"')
                .replace("@", backfill)
                .replace("#", target)
                .replace("$101", "x".repeat(101)));

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(reply.object()).containsEntry("status", 400).containsKeys("type", "title", "detail");
    assertThat(reply.errorFields()).containsExactly(field);
    assertThat(targetsOfThisTest()).isEqualTo(before);
  }

  @Test
  void reportsEveryBadFieldAtOnce() {
    Api.Reply reply =
        api.post(
            "/api/targets",
            "{\"name\":\"a b\",\"backfill\":\""
                + backfill
                + "\",\"options\":{\"items\":\"x\"},\"group\":5,\"extra\":true}");

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.errorFields())
        .containsExactlyInAnyOrder("name", "options.items", "group", "extra");
  }

  @ParameterizedTest(name = "body {0}")
  @ValueSource(strings = {"", "not json", "[1]", "\"text\""})
  void aBodyThatIsNotAJsonObjectIs400(String body) {
    Api.Reply reply = api.post("/api/targets", body);

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.errorFields()).containsExactly("body");
  }

  @Test
  void aNameOfExactlyOneHundredCharactersIsAccepted() {
    // Rejected only for the unknown backfill, so the name itself passed.
    Api.Reply reply =
        api.post(
            "/api/targets", "{\"name\":\"" + "x".repeat(100) + "\",\"backfill\":\"apptest.nope\"}");

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.errorFields()).containsExactly("backfill");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "missing payload     | {}                          | payload",
        "null payload        | {'payload':null}            | payload",
        "payload array       | {'payload':[1,2]}           | payload",
        "payload string      | {'payload':'x'}             | payload",
        "payload number      | {'payload':5}               | payload",
        "unknown field       | {'payload':{},'priority':1} | priority",
        "body not object     | [1]                         | body",
      })
  void rejectsAnInvalidLiveBatchAndQueuesNothing(String name, String body, String field) {
    data.target(target, backfill, "pending_backfill", 0);

    Api.Reply reply = api.post("/api/targets/" + target + "/live-batches", body.replace('\'', '"'));

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(reply.errorFields()).containsExactly(field);
    assertThat(data.count("select count(*) from live_batches where target_name = ?", target))
        .isZero();
  }

  @Test
  void badListFiltersAre400() {
    Api.Reply reply = api.get("/api/targets?state=dormant&page=-1&size=500");

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.errorFields()).containsExactlyInAnyOrder("state", "page", "size");
  }

  @Test
  void aBadDryRunValueIs400AndChangesNothing() {
    data.target(target, backfill, "needs_resync", 4);

    Api.Reply reply = api.post("/api/targets/" + target + "/replan?dryRun=maybe", "");

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.errorFields()).containsExactly("dryRun");
    assertThat(data.text("select state from targets where name = ?", target))
        .isEqualTo("needs_resync");
  }

  @Test
  void everyActionOnAnUnknownTargetIs404() {
    String unknown = "/api/targets/" + TestData.uniqueTarget();

    assertThat(api.get(unknown).status()).isEqualTo(404);
    assertThat(api.post(unknown + "/live-batches", "{\"payload\":{}}").status()).isEqualTo(404);
    assertThat(api.post(unknown + "/replan", "").status()).isEqualTo(404);
    assertThat(api.post(unknown + "/replan?dryRun=true", "").status()).isEqualTo(404);
    assertThat(api.delete(unknown).status()).isEqualTo(404);
    Api.Reply reply = api.send(HttpRequest.GET(unknown));
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat((String) reply.object().get("detail")).startsWith("no target named");
  }

  private long targetsOfThisTest() {
    return data.count(
        "select count(*) from targets where name = ? or backfill = ? or name = repeat('x', 100)",
        target,
        backfill);
  }
}
