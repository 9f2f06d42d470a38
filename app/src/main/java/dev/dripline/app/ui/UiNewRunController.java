package dev.dripline.app.ui;

import dev.dripline.app.audit.Audited;
import dev.dripline.app.catalogue.Catalogue;
import dev.dripline.app.catalogue.PublishedBackfill;
import dev.dripline.app.problem.ProblemException;
import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.run.DryRunResponse;
import dev.dripline.app.run.RunDesk;
import dev.dripline.spi.OptionSpec;
import dev.dripline.store.catalogue.FieldError;
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
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The dashboard's new-run form, built from the catalogue's option schema: an enum is a select, a
 * date a date input, a boolean a select of true and false, every default filled in. The form is
 * sent as the API's {@code POST /api/runs} body ({@link FormJson}) to the API's own service: first
 * as a dry run, whose plan is shown with a button to start, then to start. A refused form is shown
 * again with each field's error beside it; nothing is created.
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
  static final List<String> SETTINGS = List.of("batchSize", "maxRecords", "maxParallelBatches");

  private final Catalogue catalogue;
  private final RunDesk runs;
  private final UiPages pages;
  private final UiForms forms;

  public UiNewRunController(Catalogue catalogue, RunDesk runs, UiPages pages, UiForms forms) {
    this.catalogue = catalogue;
    this.runs = runs;
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
   */
  public record Field(
      String name,
      String label,
      String input,
      List<String> choices,
      String value,
      boolean required,
      String help,
      String error) {}

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
      Object value = FormJson.number(fields.get(setting));
      if (value != null) {
        body.put(setting, value);
      }
    }
    return FormJson.object(body);
  }

  private static Object optionValue(OptionSpec option, String text) {
    return switch (option.type()) {
      case INTEGER, DECIMAL -> FormJson.number(text);
      case BOOLEAN -> text.equals("true") || text.equals("false") ? Boolean.valueOf(text) : text;
      case DATETIME ->
          LOCAL_DATETIME.matcher(text).matches()
              ? (text.length() == 16 ? text + ":00Z" : text + "Z")
              : text;
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
      fields.add(
          setting(
              "batchSize",
              "Batch size",
              String.valueOf(chosen.defaultBatchSize()),
              "Keys per batch.",
              sent,
              errors));
      fields.add(
          setting(
              "maxRecords",
              "Max records",
              "",
              "Stop after this many keys (empty: all).",
              sent,
              errors));
      fields.add(
          setting(
              "maxParallelBatches",
              "Max parallel batches",
              chosen.maxParallelBatches() == null
                  ? ""
                  : String.valueOf(chosen.maxParallelBatches()),
              "Batches in flight at once (empty: the definition's cap).",
              sent,
              errors));
    }
    Map<String, Object> values = new HashMap<>();
    values.put("backfills", all);
    values.put("chosen", chosen);
    values.put("backfill", backfill == null ? "" : backfill);
    values.put("fields", fields);
    values.put("backfillError", errors.getOrDefault("backfill", ""));
    values.put("preview", preview);
    values.put("error", error);
    values.put("fmt", UiFormat.INSTANCE);
    return UiPages.page(status, "new-run", pages.model("New run", "new", session, values));
  }

  private static Field setting(
      String name,
      String label,
      String fallback,
      String help,
      Map<String, String> sent,
      Map<String, String> errors) {
    return new Field(
        name,
        label,
        "number",
        List.of(),
        sent.containsKey(name) ? sent.get(name) : fallback,
        false,
        help,
        errors.getOrDefault(name, ""));
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
        errors.getOrDefault(name, ""));
  }
}
