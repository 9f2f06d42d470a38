package dev.dripline.app.ui;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.auth.AuthConfig;
import dev.dripline.app.auth.Profile;
import dev.dripline.app.auth.ProfileAccess;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The dashboard's signed session cookies: who, until when, and what no one can forge. */
class UiSessionsTest {
  private static final AuthConfig AUTH = new AuthConfig("op-token", "view-token", List.of());
  private static final UiConfig CONFIG = new UiConfig("http://t/", Duration.ofHours(1), 3);
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  private static UiSessions at(Instant now, AuthConfig auth) {
    return new UiSessions(auth, profile(), CONFIG, Clock.fixed(now, ZoneOffset.UTC));
  }

  private static Profile profile() {
    return ProfileAccess.development();
  }

  @Test
  void aSignInIsASessionOfItsCredentialUntilItExpires() {
    String cookie = at(NOW, AUTH).signIn("op-token").orElseThrow();

    assertThat(at(NOW.plusSeconds(3599), AUTH).session(cookie))
        .hasValueSatisfying(
            session -> {
              assertThat(session.name()).isEqualTo("operator");
              assertThat(session.operator()).isTrue();
            });
    assertThat(at(NOW.plusSeconds(3601), AUTH).session(cookie)).isEmpty();
  }

  @Test
  void anUnknownTokenSignsNobodyIn() {
    assertThat(at(NOW, AUTH).signIn("op-token ")).isPresent();
    assertThat(at(NOW, AUTH).signIn("op-tokenx")).isEmpty();
    assertThat(at(NOW, AUTH).signIn("")).isEmpty();
    assertThat(at(NOW, AUTH).signIn(null)).isEmpty();
  }

  @Test
  void aChangedTokenEndsItsSessions() {
    String cookie = at(NOW, AUTH).signIn("view-token").orElseThrow();
    AuthConfig rotated = new AuthConfig("op-token", "new-view-token", List.of());

    assertThat(at(NOW, AUTH).session(cookie)).isPresent();
    assertThat(at(NOW, rotated).session(cookie)).isEmpty();
  }

  @Test
  void aSessionsFormTokenIsItsOwn() {
    UiSessions sessions = at(NOW, AUTH);
    UiSession one = sessions.session(sessions.signIn("op-token").orElseThrow()).orElseThrow();
    UiSession other = sessions.session(sessions.signIn("op-token").orElseThrow()).orElseThrow();

    assertThat(one.csrfToken()).isNotEqualTo(other.csrfToken());
    assertThat(UiSessions.sameToken(one.csrfToken(), one.csrfToken())).isTrue();
    assertThat(UiSessions.sameToken(other.csrfToken(), one.csrfToken())).isFalse();
    assertThat(UiSessions.sameToken("", "")).isFalse();
  }

  @Test
  void anAlteredCookieIsNoSession() {
    String cookie = at(NOW, AUTH).signIn("view-token").orElseThrow();
    String[] parts = cookie.split("\\.");
    String laterExpiry =
        String.join(
            ".",
            parts[0],
            parts[1],
            String.valueOf(Long.parseLong(parts[2]) + 1),
            parts[3],
            parts[4]);

    assertThat(at(NOW, AUTH).session(laterExpiry)).isEmpty();
    assertThat(at(NOW, AUTH).session(cookie.replace(".viewer.", ".operator."))).isEmpty();
    assertThat(at(NOW, AUTH).session("v1.viewer")).isEmpty();
    assertThat(at(NOW, AUTH).session("garbage")).isEmpty();
  }
}
