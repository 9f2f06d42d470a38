package dev.dripline.app.audit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AuditInterceptorTest {
  @Test
  void textPostgresCannotStoreBecomesTheReplacementCharacter() {
    assertThat(AuditInterceptor.storable("a\u0000b")).isEqualTo("a\uFFFDb");
    assertThat(AuditInterceptor.storable("x\uD83D")).isEqualTo("x\uFFFD");
    assertThat(AuditInterceptor.storable("\uDE00y")).isEqualTo("\uFFFDy");
    assertThat(AuditInterceptor.storable("ok \uD83D\uDE00")).isEqualTo("ok \uD83D\uDE00");
    assertThat(AuditInterceptor.storable(null)).isNull();
  }
}
