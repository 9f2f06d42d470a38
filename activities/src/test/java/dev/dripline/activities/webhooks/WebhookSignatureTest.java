package dev.dripline.activities.webhooks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class WebhookSignatureTest {
  @Test
  void signsTheStandardWebhooksTestVector() {
    // The vector the Standard Webhooks reference libraries test against.
    String signature =
        WebhookSignature.sign(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8));

    assertThat(signature).isEqualTo("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  }

  @Test
  void aSecretWithoutThePrefixOrKeyIsRefusedWithoutEchoingIt() {
    assertThatThrownBy(() -> WebhookSignature.key("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageNotContaining("MfKQ9r8");
    assertThatThrownBy(() -> WebhookSignature.key("whsec_"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
