package dev.dripline.store.migration;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;

/** The messages one logger logs at a level or above while attached, for a test to read. */
final class RecordedLog extends AppenderBase<ILoggingEvent> {
  private final Logger logger;
  private final Level atLeast;
  private final List<String> lines = new CopyOnWriteArrayList<>();
  private Level before;

  RecordedLog(Class<?> source, Level atLeast) {
    this.logger = (Logger) LoggerFactory.getLogger(source);
    this.atLeast = atLeast;
  }

  /** Starts recording; the logger logs at {@code atLeast} meanwhile if it did not already. */
  void attach() {
    before = logger.getLevel();
    if (!logger.isEnabledFor(atLeast)) {
      logger.setLevel(atLeast);
    }
    start();
    logger.addAppender(this);
  }

  void detach() {
    logger.detachAppender(this);
    logger.setLevel(before);
    stop();
  }

  List<String> lines() {
    return lines;
  }

  @Override
  protected void append(ILoggingEvent event) {
    if (event.getLevel().isGreaterOrEqual(atLeast)) {
      lines.add(event.getFormattedMessage());
    }
  }
}
