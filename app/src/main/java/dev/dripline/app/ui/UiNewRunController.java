package dev.dripline.app.ui;

import dev.dripline.app.audit.Audited;
import dev.dripline.app.catalogue.Catalogue;
import dev.dripline.app.catalogue.PublishedBackfill;
import dev.dripline.app.pool.PoolService;
import dev.dripline.app.problem.ProblemException;
import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.run.DryRunResponse;
import dev.dripline.app.run.RunDesk;
import dev.dripline.spi.OptionSpec;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.store.run.RunRepository;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.MutableHttpResponse;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Consumes;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.Produces;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.swagger.v3.oas.annotations.Hidden;
import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The dashboard's new-run form, built from the catalogue's option schema: an enum is a select, a
 * date a date input, a boolean a select of true and false, every default filled in; then the run
 * settings the API's create request takes besides the options (start time, pool, batch size and its
 * tuning, cap, failure budget, pace), each left empty showing what the API applies then. The form
 * is sent as the API's {@code POST /api/runs} body ({@link FormJson}) to the API's own service:
 * first as a dry run, whose plan is shown with a button to start, then to start. A refused form is
 * shown again with each field's error beside it; nothing is created.
 */
@Requires(notEnv = "worker")
@Produces(MediaType.TEXT_HTML)
@Hidden // the dashboard's pages are not the API: not in /openapi.yml
@Controller(UiFilter.ROOT + "/runs/new")
@ExecuteOn(TaskExecutors.BLOCKING)
public class UiNewRunController {
  /** A {@code datetime-local} input's value, which has no zone: read as UTC. */
  private static final Pattern LOCAL_DATETIME =
      Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?");

  /** The run settings the form offers beside the options, as the API names them. */
  static final List<String> SETTINGS =
      List.of(
          "startAt",
          "pool",
          "batchSize",
          "maxRecords",
          "maxParallelBatches",
          "targetBatchDuration",
          "minBatchSize",
          "maxBatchSize",
          "maxFailedBatchesPercent",
          "failureBudgetMinBatches",
          "niceRatio");

  /** The settings sent as JSON numbers when they read as one; the others are sent as typed. */
  private static final List<String> NUMERIC =
      List.of(
          "batchSize",
          "maxRecords",
          "maxParallelBatches",
          "minBatchSize",
          "maxBatchSize",
          "maxFailedBatchesPercent",
          "failureBudgetMinBatches",
          "niceRatio");

  private final Catalogue catalogue;
  private final RunDesk runs;
  private final PoolService pools;
  private final UiPages pages;
  private final UiForms forms;

  public UiNewRunController(
      Catalogue catalogue, RunDesk runs, PoolService pools, UiPages pages, UiForms forms) {
    this.catalogue = catalogue;
    this.runs = runs;
    this.pools = pools;
    this.pages = pages;
    this.forms = forms;
  }

  /**
   * One input of the form.
   *
   * @param name the form field's name ({@code options.<name>} for an option)
   * @param label what it is called on the page
   * @param input {@code select}, {@code date}, {@code datetime-local}, {@code number} or {@code
   *     text}
   * @param choices a select's values (the first empty unless the option is required)
   * @param value the value shown: the one sent, else the default
   * @param required whether the run needs it
   * @param help the option's description and type
   * @param error the API's message for this field, or empty
   * @param placeholder what an empty field means (the default the API applies), shown in the empty
   *     input or as a select's empty choice; empty for none
   */
  public record Field(
      String name,
      String label,
      String input,
      List<String> choices,
      String value,
      boolean required,
      String help,
      String error,
      String placeholder) {}

  @Get
  public HttpResponse<?> form(
      @RequestAttribute(UiSession.ATTRIBUTE) UiSession session,
      @QueryValue @Nullable String backfill) {
    return page(session, HttpStatus.OK, backfill, Map.of(), Map.of(), null, "");
  }

  /**
   * Previews the form's run (a dry run) or starts it ({@code intent=start}). A start is recorded in
   * the audit trail as {@code run.create}, with the API's body it sent; a preview is not.
   */
  @Post
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  @Audited("run.create")
  public HttpResponse<?> submit(HttpRequest<?> request, @Body @Nullable Map<String, String> form) {
    UiSession session = forms.accept(request, form);
    Map<String, String> fields = form == null ? Map.of() : form;
    String backfill = fields.get("backfill");
    String body = body(backfill, fields);
    boolean start = "start".equals(fields.get("intent"));
    HttpResponse<?> answer;
    try {
      if (start) {
        long id = runs.create(body, session.name());
        answer =
            HttpResponse.seeOther(URI.create(UiFilter.ROOT + "/runs/" + id + "?notice=started"))
                .setAttribute(Audited.RUN, id);
      } else {
        DryRunResponse preview = runs.dryRun(body);
        answer = page(session, HttpStatus.OK, backfill, fields, Map.of(), preview, "");
      }
    } catch (ValidationProblem e) {
      Map<String, String> errors = new LinkedHashMap<>();
      List<String> others = new ArrayList<>();
      for (FieldError error : e.errors()) {
        if (isFormField(error.field(), backfill)) {
          errors.merge(error.field(), error.message(), (a, b) -> a + "; " + b);
        } else {
          others.add(error.field() + ": " + error.message());
        }
      }
      answer =
          page(
                  session,
                  HttpStatus.BAD_REQUEST,
                  backfill,
                  fields,
                  errors,
                  null,
                  String.join("; ", others))
              .setAttribute(Audited.PROBLEM, e.toProblem().detail());
    } catch (ProblemException e) {
      answer =
          page(
                  session,
                  HttpStatus.valueOf(e.toProblem().status()),
                  backfill,
                  fields,
                  Map.of(),
                  null,
                  e.getMessage())
              .setAttribute(Audited.PROBLEM, e.toProblem().detail());
    }
    if (!start) {
      return answer.setAttribute(Audited.PREVIEW, true);
    }
    return answer.setAttribute(Audited.DETAIL, body);
  }

  private boolean isFormField(String field, @Nullable String backfill) {
    if (field.equals("backfill") || SETTINGS.contains(field)) {
      return true;
    }
    PublishedBackfill definition = backfill == null ? null : catalogue.find(backfill).orElse(null);
    return definition != null
        && definition.options().stream().anyMatch(o -> field.equals("options." + o.name()));
  }

  /** The API's body for this form: the backfill, the options filled in, the settings given. */
  private String body(@Nullable String backfill, Map<String, String> fields) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", backfill == null || backfill.isBlank() ? null : backfill);
    Map<String, Object> options = new LinkedHashMap<>();
    PublishedBackfill definition = backfill == null ? null : catalogue.find(backfill).orElse(null);
    if (definition != null) {
      for (OptionSpec option : definition.options()) {
        String text = fields.get("options." + option.name());
        if (text == null || text.isBlank()) {
          continue;
        }
        options.put(option.name(), optionValue(option, text.trim()));
      }
    }
    body.put("options", options);
    for (String setting : SETTINGS) {
      String text = fields.get(setting);
      if (text == null || text.isBlank()) {
        continue;
      }
      Object value =
          NUMERIC.contains(setting)
              ? FormJson.number(text)
              : setting.equals("startAt") ? utc(text.trim()) : text.trim();
      body.put(setting, value);
    }
    return FormJson.object(body);
  }

  /** A {@code datetime-local} value read as UTC; any other text as typed, for the API to judge. */
  private static String utc(String text) {
    return LOCAL_DATETIME.matcher(text).matches()
        ? (text.length() == 16 ? text + ":00Z" : text + "Z")
        : text;
  }

  private static Object optionValue(OptionSpec option, String text) {
    return switch (option.type()) {
      case INTEGER, DECIMAL -> FormJson.number(text);
      case BOOLEAN -> text.equals("true") || text.equals("false") ? Boolean.valueOf(text) : text;
      case DATETIME -> utc(text);
      default -> text;
    };
  }

  private MutableHttpResponse<?> page(
      UiSession session,
      HttpStatus status,
      @Nullable String backfill,
      Map<String, String> sent,
      Map<String, String> errors,
      @Nullable DryRunResponse preview,
      String error) {
    List<PublishedBackfill> all = catalogue.all();
    PublishedBackfill chosen =
        backfill == null
            ? null
            : all.stream().filter(b -> b.name().equals(backfill)).findFirst().orElse(null);
    List<Field> fields = new ArrayList<>();
    if (chosen != null) {
      for (OptionSpec option : chosen.options()) {
        fields.add(field(option, sent, errors));
      }
      fields.addAll(settings(chosen, sent, errors));
    }
    Map<String, Object> values = new HashMap<>();
    values.put("backfills", all);
    values.put("chosen", chosen);
    values.put("backfill", backfill == null ? "" : backfill);
    values.put("fields", fields);
    values.put("backfillError", errors.getOrDefault("backfill", ""));
    values.put("preview", preview);
    String startAt = sent.getOrDefault("startAt", "");
    values.put("startAt", startAt == null ? "" : startAt.strip().replace('T', ' '));
    values.put("error", error);
    values.put("fmt", UiFormat.INSTANCE);
    return UiPages.page(status, "new-run", pages.model("New run", "new", session, values));
  }

  /**
   * The run-level fields of the create request, each empty field meaning what the API applies
   * without it, which its placeholder and help say: the definition's setting, else the API's
   * default.
   */
  private List<Field> settings(
      PublishedBackfill chosen, Map<String, String> sent, Map<String, String> errors) {
    List<Field> fields = new ArrayList<>();
    fields.add(
        new Field(
            "startAt",
            "Start at",
            "datetime-local",
            List.of(),
            sent.getOrDefault("startAt", ""),
            false,
            "When the run starts, UTC (empty: at once).",
            errors.getOrDefault("startAt", ""),
            ""));
    List<String> poolNames = new ArrayList<>();
    poolNames.add("");
    pools.list().forEach(p -> poolNames.add(p.name()));
    String chosenPool = sent.getOrDefault("pool", "");
    if (!chosenPool.isEmpty() && !poolNames.contains(chosenPool)) {
      poolNames.add(chosenPool);
    }
    fields.add(
        new Field(
            "pool",
            "Pool",
            "select",
            List.copyOf(poolNames),
            chosenPool,
            false,
            "The pool whose slots the run's batches take (throttle and pools page).",
            errors.getOrDefault("pool", ""),
            chosen.pool() == null ? "(none)" : "(the definition's: " + chosen.pool() + ")"));
    fields.add(
        setting(
            "batchSize",
            "Batch size",
            String.valueOf(chosen.defaultBatchSize()),
            "Keys per batch.",
            "",
            sent,
            errors));
    fields.add(
        setting(
            "maxRecords", "Max records", "", "Stop after this many keys.", "all", sent, errors));
    fields.add(
        setting(
            "maxParallelBatches",
            "Max parallel batches",
            chosen.maxParallelBatches() == null ? "" : String.valueOf(chosen.maxParallelBatches()),
            "Batches in flight at once (empty: the definition's cap).",
            "",
            sent,
            errors));
    String target =
        chosen.targetBatchMillis() == null
            ? "not tuned"
            : Duration.ofMillis(chosen.targetBatchMillis()).toString();
    fields.add(
        setting(
            "targetBatchDuration",
            "Target batch duration",
            "",
            "How long a batch should take, as an ISO-8601 duration such as PT2S: the run's batch"
                + " sizes are tuned to it (empty: the definition's).",
            target,
            sent,
            errors));
    fields.add(
        setting(
            "minBatchSize",
            "Min batch size",
            "",
            "Least size of a tuned run's batches (empty: the definition's).",
            chosen.minBatchSize() == null ? "" : String.valueOf(chosen.minBatchSize()),
            sent,
            errors));
    fields.add(
        setting(
            "maxBatchSize",
            "Max batch size",
            "",
            "Largest size of a tuned run's batches (empty: the definition's).",
            chosen.maxBatchSize() == null ? "" : String.valueOf(chosen.maxBatchSize()),
            sent,
            errors));
    fields.add(
        setting(
            "maxFailedBatchesPercent",
            "Failure budget (%)",
            "",
            "The run pauses itself once more than this share of its batches failed, 0 to 100"
                + " (empty: the definition's).",
            chosen.maxFailedBatchesPercent() == null
                ? "none"
                : plain(chosen.maxFailedBatchesPercent()),
            sent,
            errors));
    fields.add(
        setting(
            "failureBudgetMinBatches",
            "Budget applies after",
            "",
            "Batches that must finish before the failure budget applies.",
            String.valueOf(RunRepository.DEFAULT_FAILURE_BUDGET_MIN_BATCHES),
            sent,
            errors));
    fields.add(
        setting(
            "niceRatio",
            "Nice ratio",
            "",
            "How long each lane rests after a batch, times the batch's duration, 0 to 100 (empty:"
                + " the definition's).",
            plain(chosen.niceRatio()),
            sent,
            errors));
    return fields;
  }

  /** A number as typed into the form: {@code 0}, {@code 2.5}. */
  private static String plain(double value) {
    return BigDecimal.valueOf(value).stripTrailingZeros().toPlainString();
  }

  private static Field setting(
      String name,
      String label,
      String fallback,
      String help,
      String placeholder,
      Map<String, String> sent,
      Map<String, String> errors) {
    return new Field(
        name,
        label,
        NUMERIC.contains(name) ? "number" : "text",
        List.of(),
        sent.containsKey(name) ? sent.get(name) : fallback,
        false,
        help,
        errors.getOrDefault(name, ""),
        placeholder);
  }

  private static Field field(
      OptionSpec option, Map<String, String> sent, Map<String, String> errors) {
    String name = "options." + option.name();
    String fallback = option.defaultValue() == null ? "" : String.valueOf(option.defaultValue());
    List<String> choices = List.of();
    String input =
        switch (option.type()) {
          case ENUM, BOOLEAN -> "select";
          case DATE -> "date";
          case DATETIME -> "datetime-local";
          case INTEGER, DECIMAL -> "number";
          default -> "text";
        };
    if (input.equals("select")) {
      List<String> values = new ArrayList<>();
      if (!option.required()) {
        values.add("");
      }
      values.addAll(
          option.allowedValues() != null && option.type() != dev.dripline.spi.OptionType.BOOLEAN
              ? option.allowedValues()
              : List.of("true", "false"));
      choices = List.copyOf(values);
    }
    if (input.equals("datetime-local") && fallback.endsWith("Z")) {
      fallback = fallback.substring(0, fallback.length() - 1);
    }
    String help =
        (option.description() == null ? "" : option.description())
            + " ("
            + option.type().wire()
            + (option.type() == dev.dripline.spi.OptionType.DATETIME ? ", UTC" : "")
            + (option.min() == null ? "" : ", at least " + option.min())
            + (option.notBefore() == null ? "" : ", not before " + option.notBefore())
            + ")";
    return new Field(
        name,
        option.name(),
        input,
        choices,
        sent.containsKey(name) ? sent.get(name) : fallback,
        option.required(),
        help,
        errors.getOrDefault(name, ""),
        "");
  }
}
